"""The releases the lab runs: a product's member jar and its matching Python client, resolved
into a cache at run time and never shipped with partsafe.

Hazelcast's member jars come from Maven Central (`com.hazelcast:hazelcast:V`, fetched with
`mvn dependency:copy`), or a jar given with ``--jar``. The client is `hazelcast-python-client`
of the server's major (3.12.x speaks the Open Binary Protocol 1.x of Hazelcast 3; 4.2.x and
5.x speak protocol 2.x of Hazelcast 4 and 5); the lab installs it into the cache with
``pip install --target`` and runs the workload in a process of its own with that folder on its
path, so that clients of different majors never meet in one interpreter.

A missing tool (Java, Maven, pip) or a release that cannot be had is a `LabSetupError`: one
message that says what is missing and how to get it (exit 2).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_VERSIONS",
    "LabSetupError",
    "Release",
    "cache_dir",
    "resolve",
]

#: the release of each line the lab runs when only the line is named (``--version 4``)
DEFAULT_VERSIONS = {"3": "3.12.2", "4": "4.2.8", "5": "5.5.0"}
#: the Python client of each Hazelcast major (its own major must match the server's)
CLIENT_VERSIONS = {3: "3.12.3", 4: "4.2.2", 5: "5.5.0"}
#: the release profile (``partsafe profiles``) whose rules a Hazelcast line's code follows
PROFILES = {3: "hz-3.9", 4: "hz-4.1", 5: "hz-5"}

_VERSION = re.compile(r"\d+(?:\.\d+){0,2}(?:-[A-Za-z0-9.]+)?")


class LabSetupError(Exception):
    """Something the lab needs is not on this machine; the message says what and how to get it."""


@dataclass(frozen=True, slots=True)
class Release:
    """A product release ready to run: its member jar, the client folder for the workload (None:
    the client installed in this interpreter) and the profile its code follows."""

    product: str
    version: str
    jar: Path
    client_path: Path | None
    client_version: str

    @property
    def major(self) -> int:
        return int(self.version.split(".", 1)[0])

    @property
    def profile(self) -> str:
        return PROFILES[self.major]

    @property
    def main_class(self) -> str:
        """The main class: 3.x ``StartServer``, 4.0 and later ``HazelcastMemberStarter``."""
        return ("com.hazelcast.core.server.StartServer" if self.major == 3
                else "com.hazelcast.core.server.HazelcastMemberStarter")


def cache_dir() -> Path:
    """Where fetched jars and clients are kept: ``$PARTSAFE_CACHE``, else
    ``$XDG_CACHE_HOME/partsafe``, else ``~/.cache/partsafe``."""
    if env := os.environ.get("PARTSAFE_CACHE"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "partsafe"


def java_binary() -> str:
    """The ``java`` the members run on; Hazelcast 3.12 to 5.x run on Java 17 with the
    ``--add-opens`` flags of `jvm_flags`."""
    java = shutil.which("java")
    if java is None:
        raise LabSetupError("the lab runs Hazelcast members on Java, and no `java` is on PATH: "
                            "install a JDK 17 (Debian: apt-get install openjdk-17-jdk-headless)")
    return java


def _version_of(product: str, version: str | None) -> str:
    if product != "hazelcast":
        raise LabSetupError(f"the lab runs no product {product!r}; products: hazelcast")
    version = version or DEFAULT_VERSIONS["5"]
    version = DEFAULT_VERSIONS.get(version, version)
    if not _VERSION.fullmatch(version):
        raise LabSetupError(f"--version {version!r} is not a release number (3.12.2, 4.2.8, 5.5.0)")
    major = int(version.split(".", 1)[0])
    if major not in CLIENT_VERSIONS or (major == 3 and not version.startswith("3.12")):
        raise LabSetupError(f"the lab runs Hazelcast 3.12, 4.x and 5.x, not {version}: older "
                            "members do not start on Java 17, and their clients do not run on "
                            "Python 3.11")
    return version


def _fetch_jar(version: str, cache: Path, quiet: bool) -> Path:
    """`com.hazelcast:hazelcast:VERSION` from Maven Central into the cache."""
    folder = cache / "jars"
    jar = folder / f"hazelcast-{version}.jar"
    if jar.is_file():
        return jar
    mvn = shutil.which("mvn")
    if mvn is None:
        raise LabSetupError(f"Hazelcast {version}'s jar is not in {folder}, and no `mvn` is on "
                            "PATH to fetch it from Maven Central: install Maven (Debian: apt-get "
                            "install maven), or give the member jar with --jar FILE")
    folder.mkdir(parents=True, exist_ok=True)
    cmd = [mvn, "-q", "-B", "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy",
           f"-Dartifact=com.hazelcast:hazelcast:{version}:jar", f"-DoutputDirectory={folder}"]
    if not quiet:
        print(f"lab: fetching com.hazelcast:hazelcast:{version} with Maven", file=sys.stderr)
    done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not jar.is_file():
        tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
        raise LabSetupError(f"Maven could not fetch com.hazelcast:hazelcast:{version} "
                            f"({' / '.join(tail) or f'exit {done.returncode}'}); "
                            "give the member jar with --jar FILE")
    return jar


def _installed_client() -> str | None:
    """The version of `hazelcast-python-client` in this interpreter, if any."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hazelcast-python-client")
    except PackageNotFoundError:
        return None


def _client(major: int, cache: Path, quiet: bool) -> tuple[Path | None, str]:
    """The client folder of `major` (None: this interpreter's own client, of the same major)."""
    installed = _installed_client()
    if installed is not None and installed.split(".", 1)[0] == str(major):
        return None, installed
    wanted = CLIENT_VERSIONS[major]
    folder = cache / "clients" / f"hazelcast-python-client-{wanted}"
    if (folder / "hazelcast" / "__init__.py").is_file():
        return folder, wanted
    if not quiet:
        print(f"lab: installing hazelcast-python-client {wanted} into {folder}", file=sys.stderr)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
         "--disable-pip-version-check", "--target", str(folder),
         f"hazelcast-python-client=={wanted}"],
        capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        raise LabSetupError(f"pip could not install hazelcast-python-client {wanted}, the "
                            f"client of Hazelcast {major} ({tail[0]}); install partsafe's `lab` "
                            "extra (pip install 'partsafe[lab]') for Hazelcast 5")
    return folder, wanted


def resolve(product: str, version: str | None = None, jar: str | None = None,
            cache: Path | None = None, quiet: bool = False) -> Release:
    """The release to run: `version` (a release, or a line ``3``, ``4``, ``5``; default the
    newest 5.x the lab knows), from `jar` when given, else from the cache, fetched there when
    missing. Raises `LabSetupError` saying what is missing and how to get it."""
    java_binary()
    cache = cache or cache_dir()
    if jar is not None:
        path = Path(jar)
        if not path.is_file():
            raise LabSetupError(f"--jar {jar}: no such file")
        found = re.search(r"hazelcast-(\d+\.\d+(?:\.\d+)?)", path.name)
        if version is None and found is None:
            raise LabSetupError(f"--jar {jar}: its name gives no version; say which with --version")
        version = _version_of(product, version or (found[1] if found else None))
    else:
        version = _version_of(product, version)
        path = _fetch_jar(version, cache, quiet)
    major = int(version.split(".", 1)[0])
    client_path, client_version = _client(major, cache, quiet)
    return Release(product, version, path.resolve(), client_path, client_version)
