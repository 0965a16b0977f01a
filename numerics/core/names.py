"""Names of the core's choices (models, time units, integrators, field backends), without heavy imports.

The command-line parsers read these constants; keeping them in a module that imports nothing lets
``attnflow --help`` build every parser without importing NumPy's numerical stack, SciPy or SymPy. The modules
that implement the choices (``field``, ``integrators``, ``model``) import them from here.
"""
MODELS = ("sa", "usa")
TIME_UNITS = ("natural", "rescaled")
METHODS = ("layer", "rk4", "adaptive", "dp5", "dop853")
#: the methods with error control (run from tolerances and output times; ``dt`` is only a first-step hint)
ADAPTIVE_METHODS = ("adaptive", "dp5", "dop853")
BACKENDS = ("auto", "direct", "fourier", "numba", "harmonic")
