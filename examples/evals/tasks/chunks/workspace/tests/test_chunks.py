import unittest

from lists.chunks import chunks


class ChunksTest(unittest.TestCase):
    def test_exact(self):
        self.assertEqual(chunks([1, 2, 3, 4], 2), [[1, 2], [3, 4]])

    def test_shorter_last(self):
        self.assertEqual(chunks([1, 2, 3, 4, 5, 6, 7], 3), [[1, 2, 3], [4, 5, 6], [7]])

    def test_empty(self):
        self.assertEqual(chunks([], 3), [])


if __name__ == "__main__":
    unittest.main()
