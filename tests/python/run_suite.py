"""Runs one test module of this folder under unittest (python -I leaves the script's folder off sys.path)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
module = sys.argv[1]
result = unittest.main(module=module, argv=[sys.argv[0]] + sys.argv[2:], exit=False).result
sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 else 1)
