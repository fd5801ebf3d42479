"""`discern standards` against `git status --porcelain` on a real repository (babel/babel in
CONTRIBUTING.md), by hand: every reading reused, and after a one-file commit; interleaved
round by round, medians. Each round commits one more line to FILE.

usage: against_git_status.py DISCERN_BIN ROUNDS WORK_CLONE FILE"""
import subprocess, time, statistics, sys, os
D = sys.argv[1]; R = int(sys.argv[2])
W = sys.argv[3]
env = dict(os.environ, GIT_AUTHOR_NAME='a', GIT_AUTHOR_EMAIL='a@b', GIT_COMMITTER_NAME='a', GIT_COMMITTER_EMAIL='a@b')
def t(cmd):
    s = time.perf_counter(); r = subprocess.run(cmd, cwd=W, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); return time.perf_counter() - s, r.returncode
f = sys.argv[4]
res = {k: [] for k in ['status', 'reused', 'status_one', 'one']}
subprocess.run([D, 'standards'], cwd=W, env=env, stdout=subprocess.DEVNULL)
for i in range(R):
    res['status'].append(t(['git', 'status', '--porcelain'])[0]); res['reused'].append(t([D, 'standards'])[0])
    subprocess.run(f'echo "// TODO v{i}" >> {f} && git commit -qam v{i}', shell=True, cwd=W, env=env, check=True)
    res['one'].append(t([D, 'standards'])[0]); res['status_one'].append(t(['git', 'status', '--porcelain'])[0])
m = {k: statistics.median(v) * 1000 for k, v in res.items()}
print(f"git status {m['status']:.0f} ms | reused {m['reused']:.0f} ms = {m['reused']/m['status']:.2f}x | "
      f"after a one-file commit {m['one']:.0f} ms = {m['one']/m['status_one']:.2f}x (git status {m['status_one']:.0f} ms)  load {os.getloadavg()[0]:.2f}")
