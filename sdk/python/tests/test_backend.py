"""Unit tests of the package's build backend (_build/backend.py): the wheel,
the editable wheel, the sdist and the metadata pip installs from. pip itself
runs it in tests/conformance (TestPythonSDKInstalls) and in
tests/python_client_test.go (TestPythonExample)."""

import base64
import csv
import hashlib
import importlib.util
import io
import os
import shutil
import sys
import tarfile
import tempfile
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "_build"))

import backend  # noqa: E402


class Backend(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)

    def test_the_wheel_holds_every_package_file_with_its_record(self):
        name = backend.build_wheel(self.dir)
        self.assertEqual(name, "agentcore-0.2.0-py3-none-any.whl")
        with zipfile.ZipFile(os.path.join(self.dir, name)) as z:
            names = z.namelist()
            for want in ("agentcore/client/__init__.py", "agentcore/py.typed", "agentcore/v1/agent_service_pb2.pyi",
                         "agentcore_tool/__init__.py", "agentcore_tool/_proto/plugin_pb2.py"):
                self.assertIn(want, names)
            self.assertFalse([n for n in names if "__pycache__" in n or n.endswith(".pyc")])
            record = list(csv.reader(io.StringIO(z.read("agentcore-0.2.0.dist-info/RECORD").decode())))
            self.assertEqual(sorted(r[0] for r in record), sorted(names))
            for path, digest, size in record:
                if path.endswith("RECORD"):
                    self.assertEqual((digest, size), ("", ""))
                    continue
                data = z.read(path)
                want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                self.assertEqual((digest, int(size)), (want, len(data)), path)
            meta = z.read("agentcore-0.2.0.dist-info/METADATA").decode()
            self.assertIn("Name: agentcore\n", meta)
            self.assertIn("Requires-Dist: grpcio>=1.51\n", meta)
            self.assertIn("Requires-Python: >=3.9\n", meta)
            self.assertIn("Tag: py3-none-any", z.read("agentcore-0.2.0.dist-info/WHEEL").decode())
        again = tempfile.mkdtemp(dir=self.dir)
        backend.build_wheel(again)
        with open(os.path.join(self.dir, name), "rb") as a, open(os.path.join(again, name), "rb") as b:
            self.assertEqual(a.read(), b.read(), "two builds differ")

    def test_the_editable_wheel_points_at_src(self):
        name = backend.build_editable(self.dir)
        with zipfile.ZipFile(os.path.join(self.dir, name)) as z:
            pth = z.read("agentcore.pth").decode().strip()
        self.assertEqual(os.path.realpath(pth), os.path.realpath(os.path.join(HERE, "..", "src")))

    def test_the_sdist_builds_the_same_wheel(self):
        name = backend.build_sdist(self.dir)
        with tarfile.open(os.path.join(self.dir, name)) as t:
            names = t.getnames()
            self.assertIn("agentcore-0.2.0/PKG-INFO", names)
            self.assertIn("agentcore-0.2.0/_build/backend.py", names)
            self.assertIn("agentcore-0.2.0/src/agentcore/client/_sync.py", names)
            t.extractall(self.dir)
        path = os.path.join(self.dir, "agentcore-0.2.0", "_build", "backend.py")
        spec = importlib.util.spec_from_file_location("unpacked_backend", path)
        unpacked = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(unpacked)
        from_sdist, from_tree = tempfile.mkdtemp(dir=self.dir), tempfile.mkdtemp(dir=self.dir)
        a, b = unpacked.build_wheel(from_sdist), backend.build_wheel(from_tree)
        with open(os.path.join(from_sdist, a), "rb") as fa, open(os.path.join(from_tree, b), "rb") as fb:
            self.assertEqual(fa.read(), fb.read())

    def test_metadata_and_what_it_needs(self):
        name = backend.prepare_metadata_for_build_wheel(self.dir)
        self.assertEqual(name, "agentcore-0.2.0.dist-info")
        self.assertTrue(os.path.isfile(os.path.join(self.dir, name, "METADATA")))
        self.assertEqual(backend.get_requires_for_build_wheel(), [] if sys.version_info >= (3, 11) else ["tomli>=1.1"])

    def test_an_unknown_project_key_is_an_error(self):
        project = {"name": "x", "version": "1", "scripts": {"x": "y:z"}}
        real = backend._project
        try:
            backend._project = lambda: backend._checked(project)
            with self.assertRaisesRegex(ValueError, "scripts"):
                backend.build_wheel(self.dir)
        finally:
            backend._project = real


if __name__ == "__main__":
    unittest.main()
