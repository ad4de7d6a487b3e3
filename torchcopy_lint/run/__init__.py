"""Running the engine for a front end: over many files in workers, or on one file inside a host.

In: paths (or stdin) with their settings, or one buffer from flake8 or an editor. Out: every file's
diagnostics, sorted, and the fixes written when asked.

``runner.py`` (what the CLI calls: the result cache, fixing, notebooks; ``discover.py`` finds the files,
``folders.py`` and ``filestats.py`` look up what a warm run needs without reading them) lints each
file in a worker of ``isolation.py`` (a crash or a hang costs one file, never the run), with
``progress.py``'s bar on a terminal; ``guard.py`` lints inside a host that must not go down (the flake8
plugin, the language server): a bug of ours becomes TCL003, never an exception. It imports the engine,
rules/, fixing/, notebook/ and everything below them; the front ends (cli.py, flake8_plugin.py,
server/) call it.
"""
