# The wheel carries a compiled program (memsched_torch/_bin/memsched): a platform wheel, not a
# pure one. Everything else is in pyproject.toml.
from setuptools import setup
from setuptools.dist import Distribution


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(distclass=BinaryDistribution)
