"""ULTRAG's neural executor: ULTRA / ULTRAQUERY in plain torch with the bundled checkpoint (extra ``[neural]``).

Importing this package registers the ``neural`` executor; without torch it raises an error naming the extra.
"""

from kgrag.methods.ultrag.neural.executor import NeuralExecutor

__all__ = ["NeuralExecutor"]
