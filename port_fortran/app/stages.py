"""The pipeline's stages for an application run: every file with the settings its build
used (``fortran.program.FileSettings`` from the recorded compile commands).

The main process sets :attr:`AppStages.file_settings` before the program model is built;
worker processes load the saved program model, which carries each file's settings, so the
harness of every kernel compiles its original as the application's build does.
"""
from __future__ import annotations

from ..pipeline.stages import RealStages


class AppStages(RealStages):
    file_settings: dict = {}

    def build_program(self, files, include_dirs=(), defines=None, routines=None, fflags=()):
        from ..fortran.program_build import build_program

        def parse(p, inc, d, modules=None):
            return self.parse(p, inc, d, modules=modules)

        return build_program([], include_dirs, defines, fflags, routines=routines, files=list(files), parse=parse,
                             settings=dict(self.file_settings))

    def compile_settings(self, kernel):
        prog = self.program
        if prog is not None and prog.has_file(kernel.file):
            st = prog.settings_of(kernel.file)
            return tuple(st.include_dirs), st.defines_dict, list(st.fflags)
        return super().compile_settings(kernel)


def make_stages(config) -> AppStages:
    return AppStages(config)
