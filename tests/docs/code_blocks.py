"""Every code block of the documentation (README.md, docs/**/*.md) that is a command or a script
says whether a test runs it, on the line before its fence:

    <!-- runs: PATH -->       PATH (from the repository root) holds every line of the block (blanks,
                              comments and `...` elisions aside; spaces compared collapsed), and a
                              test runs PATH: it is tests/..., .ci/run, or named by a script in tests/
    <!-- not-run: REASON -->  an excerpt, a template or a command for another machine

Blocks with no language (output, file trees) are text. Prints one line per defect; exit 1 if any.

    python3 tests/docs/code_blocks.py REPO
"""
import pathlib
import re
import sys

RUNNABLE = {"bash", "sh", "console", "shell", "python", "py", "ini", "cpp", "c++", "cmake", "toml"}
MARKER = re.compile(r"^<!--\s*(runs|not-run):\s*(.+?)\s*-->$")


def blocks(text):
    """(line number, info string, body lines, the line before the fence) of each fenced block."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        match = re.match(r"^(`{3,})(.*)$", lines[i])
        if not match:
            i += 1
            continue
        start, fence, info = i, match.group(1), match.group(2).strip()
        body = []
        i += 1
        while i < len(lines) and not lines[i].startswith(fence):
            body.append(lines[i])
            i += 1
        before = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        yield start + 1, info, body, before
        i += 1


def collapsed(line):
    return " ".join(line.split())


def meaningful(body, info):
    comment = "//" if info in ("cpp", "c++") else "#"
    for line in body:
        text = collapsed(line)
        if text and not text.startswith(comment) and text not in ("...", "// ...", "# ..."):
            yield text


def run_by_a_test(repo, path):
    if path.parts[0] == "tests" or str(path) == ".ci/run":
        return True
    return any(str(path) in script.read_text(errors="replace")
               for script in (repo / "tests").rglob("*") if script.suffix in (".sh", ".txt", ".py") and script.is_file())


def check_block(repo, where, info, body, before):
    language = info.split()[0].strip("{}") if info else ""
    if language not in RUNNABLE:
        return None
    marker = MARKER.match(before.strip())
    if not marker:
        return f"{where}: a {language} block with no <!-- runs: PATH --> or <!-- not-run: REASON --> line before it"
    kind, value = marker.groups()
    if kind == "not-run":
        return None
    path = pathlib.Path(value)
    source = repo / path
    if not source.is_file():
        return f"{where}: runs: {value} is not a file of the repository"
    if not run_by_a_test(repo, path):
        return f"{where}: runs: {value}, but no test under tests/ names it"
    have = {collapsed(line) for line in source.read_text(errors="replace").splitlines()}
    missing = [line for line in meaningful(body, language) if line not in have]
    if missing:
        return f"{where}: {len(missing)} line(s) of the block are not in {value}, first: {missing[0]!r}"
    return None


def main(repo):
    repo = pathlib.Path(repo).resolve()
    pages = [repo / "README.md"] + sorted((repo / "docs").rglob("*.md"))
    defects, counts = [], {"runs": 0, "not-run": 0, "text": 0}
    for page in pages:
        for number, info, body, before in blocks(page.read_text()):
            where = f"{page.relative_to(repo)}:{number}"
            defect = check_block(repo, where, info, body, before)
            if defect:
                defects.append(defect)
            marker = MARKER.match(before.strip())
            counts[marker.group(1) if marker and info else "text"] += 1
    for defect in defects:
        print(defect)
    print(f"code blocks: {counts['runs']} run by a test, {counts['not-run']} marked not run, "
          f"{counts['text']} text; {len(defects)} defect(s)")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
