#!/usr/bin/env python3
"""Push CI reuse over a day of landings (issue 47 item 5; by hand, not part of the suite:
`python3 scripts/push-reuse.py target/debug/discern 12`): N pushes to a bare forge's main, each touching src/,
docs/ or README; for each push, the README's push job (depth-1 checkout, unshallow main,
discern sync, CI=true discern standards --baseline BEFORE) then the publish job
(discern sync --push with the CI key). Prints reused / readings for the binary given."""
import json, os, subprocess, sys, tempfile, shutil

BIN = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 30
root = tempfile.mkdtemp(prefix="reuse-")
home = os.path.join(root, "home"); os.makedirs(home)
env = {"PATH": os.environ["PATH"], "HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
       "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.com",
       "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@example.com",
       "DISCERN_CACHE_DIR": os.path.join(root, "cache")}

def sh(args, cwd, extra=None, check=True):
    e = dict(env); e.update(extra or {})
    r = subprocess.run(args, cwd=cwd, env=e, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise SystemExit(f"{args} failed: {r.stdout}\n{r.stderr}")
    return r

def key(name):
    path = os.path.join(root, name)
    sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path], root)
    return path, open(path + ".pub").read().strip()

owner, owner_pub = key("owner")
ci, ci_pub = key("ci")
seed = os.path.join(root, "seed"); os.makedirs(seed)
sh(["git", "init", "-q", "-b", "main"], seed)
files = {
    "src/lib.rs": "// TODO one\npub fn a() {}\n",
    "src/main.rs": "fn main() {}\n",
    "docs/guide.md": "# Guide\nTODO: write\n",
    "README.md": "# app\n",
    ".discern/allowed_signers": f'owner@example.com namespaces="discern-approval" {owner_pub}\nci@example.com namespaces="discern-evidence" {ci_pub}\n',
    "discern.toml": """[repository]
pin_on_done = false

[standards.todo]
direction = "down"
limit = 50
producer = "builtin:pattern"
config = { pattern = "TODO", paths = ["src/**"] }
metric = "matches"

[standards.doc_todo]
direction = "down"
limit = 50
producer = "builtin:pattern"
config = { pattern = "TODO", paths = ["docs/**"] }
metric = "matches"

[standards.longest]
direction = "down"
limit = 1000
producer = "builtin:extent"
config = { paths = ["**"] }
metric = "max_lines"

[acceptance]
allowed_signers = ".discern/allowed_signers"

[evidence]
repository = "example.com/acme/app"
publish = "trunk-ci"
""",
}
for p, c in files.items():
    os.makedirs(os.path.dirname(os.path.join(seed, p)) or seed, exist_ok=True)
    open(os.path.join(seed, p), "w").write(c)
sh(["git", "add", "-A"], seed); sh(["git", "commit", "-qm", "seed"], seed)
origin = os.path.join(root, "origin.git")
sh(["git", "init", "-q", "--bare", "-b", "main", origin], root)
url = "file://" + origin
sh(["git", "push", "-q", url, "main"], seed)

def push_job(i, before):
    clone = os.path.join(root, f"ci-{i}")
    os.makedirs(clone)
    sh(["git", "init", "-q"], clone); sh(["git", "remote", "add", "origin", url], clone)
    sh(["git", "fetch", "-q", "--depth", "1", "origin", "refs/heads/main"], clone)
    sh(["git", "checkout", "-q", "--detach", "FETCH_HEAD"], clone)
    sh(["git", "fetch", "-q", "--unshallow", "origin", "+refs/heads/main:refs/remotes/origin/main"], clone)
    ci_env = {"CI": "true"}
    sh([BIN, "sync"], clone, ci_env)
    args = [BIN, "standards", "--json"] + (["--baseline", before] if before else [])
    out = json.loads(sh(args, clone, ci_env, check=False).stdout)
    stds = out.get("data", {}).get("standards", [])
    reused = sum(1 for s in stds if s.get("measurement") == "reused")
    sh([BIN, "sync", "--push"], clone, {"CI": "true", "DISCERN_EVIDENCE_KEY": open(ci).read()})
    shutil.rmtree(clone)
    return reused, len(stds), out.get("ok")

dev = os.path.join(root, "dev")
sh(["git", "clone", "-q", url, dev], root)
total_reused = total = 0
before = None
r, t, ok = push_job(0, None)
for i in range(1, N + 1):
    before = sh(["git", "rev-parse", "main"], origin).stdout.strip()
    target = ["src/main.rs", "docs/guide.md", "README.md"][i % 3]
    with open(os.path.join(dev, target), "a") as f:
        f.write(f"// line {i}\n" if target.endswith(".rs") else f"line {i}\n")
    sh(["git", "commit", "-qam", f"change {i}"], dev)
    sh(["git", "push", "-q", "origin", "main"], dev)
    r, t, ok = push_job(i, before)
    total_reused += r; total += t
    if not ok:
        print(f"push {i}: not ok", file=sys.stderr)
print(f"{os.path.basename(BIN)}: {N} pushes, {total_reused}/{total} readings reused ({100*total_reused/total:.0f} %)")
shutil.rmtree(root)
