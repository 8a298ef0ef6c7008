#!/usr/bin/env python3
"""clang-tidy over every translation unit of a build, file by file, skipping
the files already found clean with the same input.

    tidy.py ROOT COMPILE_COMMANDS CACHE_DIR LOG [REGEX...]

Each unity batch of the build (ui/CMakeLists.txt) is split back into its
files, so every file is analysed with only its own #includes. A file's key is
the hash of clang-tidy's version, every .clang-tidy of the checkout, the
compile command and the file as clang preprocesses it (every header it reads,
its comments and line markers, paths taken relative to the checkout): the same key means clang-tidy would
read the same input under the same checks, so a file clean under a key stays
clean and is not analysed again. Only clean results are kept; a finding is
reported every time. Exit status: 0 when every file is clean, 1 otherwise.
"""
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

TIDY = "clang-tidy-14"
CLANG = "clang++-14"
JOBS = 2


def split_unity(entries):
    out = []
    for e in entries:
        files = [e["file"]]
        if re.search(r"/Unity/unity_\d+_cxx\.cxx$", e["file"]):
            with open(e["file"], encoding="utf-8") as f:
                files = re.findall(r'^#include "(.*)"$', f.read(), re.M)
        for name in files:
            out.append(dict(e, file=name, command=e["command"].replace(e["file"], name)))
    return out


def preprocess_command(entry):
    """The compile command as clang's preprocessor alone, writing to stdout."""
    args = shlex.split(entry["command"])[1:]
    kept, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a.startswith("-fsanitize"):
            continue
        kept.append(a)
    # Comments kept (-CC): a NOLINT is a comment, and it changes the verdict.
    return [CLANG, "-E", "-CC", "-Wno-unknown-warning-option", "-Wno-unused-command-line-argument"] + kept + ["-o", "-"]


def key_of(entry, root, common):
    relative = lambda text: text.replace(root, "@ROOT@")
    run = subprocess.run(preprocess_command(entry), cwd=entry["directory"], capture_output=True)
    if run.returncode != 0:
        return None  # analysed, and clang-tidy reports what is wrong
    h = hashlib.sha256()
    h.update(common)
    h.update(relative(entry["file"]).encode())
    h.update(relative(entry["command"]).encode())
    h.update(run.stdout.replace(root.encode(), b"@ROOT@"))
    return h.hexdigest()


def main():
    root, db_path, cache_dir, log_path, *filters = sys.argv[1:]
    root = os.path.realpath(root)
    filters = filters or [rf"^{re.escape(root)}/(app|core|ui|bench|tests)/"]
    entries = [e for e in split_unity(json.load(open(db_path)))
               if any(re.search(f, e["file"]) for f in filters)]
    version = subprocess.run([TIDY, "--version"], capture_output=True, text=True).stdout
    configs = subprocess.run(["git", "-C", root, "ls-files", "-z", "--", "*.clang-tidy", ".clang-tidy"],
                             capture_output=True, text=True).stdout.split("\0")
    common = version.encode()
    for c in sorted(filter(None, configs)):
        common += c.encode() + open(os.path.join(root, c), "rb").read()
    os.makedirs(cache_dir, exist_ok=True)

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(JOBS) as pool:
        keys = list(pool.map(lambda e: key_of(e, root, common), entries))
    hashed = time.monotonic() - started
    todo = [(e, k) for e, k in zip(entries, keys) if not (k and os.path.exists(os.path.join(cache_dir, k)))]

    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "compile_commands.json"), "w") as f:
            json.dump([e for e, _ in todo], f)

        def analyse(item):
            entry, key = item
            run = subprocess.run([TIDY, "-p", tmp, "--quiet", "--extra-arg=-Wno-unknown-warning-option",
                                  entry["file"]], capture_output=True, text=True)
            if run.returncode == 0 and key:
                open(os.path.join(cache_dir, key), "w").close()
            return entry["file"], run

        failed = []
        with open(log_path, "w") as log, concurrent.futures.ThreadPoolExecutor(JOBS) as pool:
            for name, run in pool.map(analyse, todo):
                log.write(f"{TIDY} {name}\n{run.stdout}{run.stderr}")
                if run.returncode != 0:
                    failed.append((name, run))
    for name, run in failed:
        text = re.sub(r"\x1b\[[0-9;]*m", "", run.stdout + run.stderr)
        lines = [l for l in text.splitlines() if not re.search(r"warnings? generated\.$", l)]
        print("\n".join(lines[:40]), file=sys.stderr)
    print(f"clang-tidy: {len(entries)} files, {len(entries) - len(todo)} unchanged since found clean "
          f"(keys in {hashed:.0f} s), {len(todo)} analysed, {len(failed)} with findings", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
