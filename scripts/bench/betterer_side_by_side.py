#!/usr/bin/env python3
"""betterer 5.4.0 against discern on a real repository (babel/babel in CONTRIBUTING.md), by
hand: four cases (first run, unchanged re-run, one file changed and committed, CI on a fresh
clone), interleaved round by round, medians. Nothing here uses the network.

usage: betterer_side_by_side.py DISCERN_BIN ROUNDS WORK_CLONE NODE_MODULES

WORK_CLONE: a clone on branch `main` whose HEAD commit holds .betterer.cjs, discern.toml and a
matching .betterer.results, with NODE_MODULES (where `npm install @betterer/cli@5.4.0
@betterer/regexp@5.4.0` ran) symlinked as node_modules and excluded in .git/info/exclude.
Every round starts from that commit (the branch is reset to it at the end of each round).
"""
import subprocess, time, shutil, os, statistics, sys, re, resource

D = os.path.abspath(sys.argv[1])
R = int(sys.argv[2])
W = os.path.abspath(sys.argv[3])
CI = W + '-ci'
NM = os.path.abspath(sys.argv[4])
B = [NM + '/.bin/betterer', '-c', '.betterer.cjs', '--silent']
BCI = [NM + '/.bin/betterer', 'ci', '-c', '.betterer.cjs', '--silent']
os.chdir(W)
# babel's tsconfig.json uses an `extends` array the ts-node bundled with betterer 5 cannot read;
# babel's package.json is "type": "module", hence the config is .betterer.cjs.
env = dict(os.environ, TS_NODE_SKIP_PROJECT='true', GIT_AUTHOR_NAME='a', GIT_AUTHOR_EMAIL='a@b',
           GIT_COMMITTER_NAME='a', GIT_COMMITTER_EMAIL='a@b')
env.pop('CI', None)


def cpu_of_children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def t(cmd, cwd=W):
    """Wall seconds, exit code, CPU seconds (the command and every process it waited for)."""
    s, c = time.perf_counter(), cpu_of_children()
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - s, r.returncode, cpu_of_children() - c


def sh(c, cwd=W):
    subprocess.run(c, shell=True, check=True, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def out(c, cwd=W):
    return subprocess.run(c, shell=True, check=True, cwd=cwd, env=env, capture_output=True,
                          text=True).stdout.strip()


sh('git checkout -q main && git diff --quiet HEAD')
BASE = out('git rev-parse HEAD')
# files to touch: the first few files betterer lists for `todo`
files = sorted({re.sub(r':\d+$', '', f) for f in
                re.findall(r'^\s*"(packages/[^"]+\.(?:js|ts):\d+)": \[', open('.betterer.results').read(), re.M)})[:5]
print(f'discern {D}  rounds {R}  base {BASE[:12]}  load at start {os.getloadavg()}', flush=True)

res = {k: [] for k in ['first_b', 'first_d', 'rerun_b', 'rerun_d', 'one_b', 'one_d', 'ci_b', 'ci_d']}
rcs = {k: set() for k in res}
cpu = {k: [] for k in res}


def rec(k, r):
    res[k].append(r[0]); rcs[k].add(r[1]); cpu[k].append(r[2])


for i in range(R):
    # 1. first run: betterer without .betterer.results, discern without evidence
    sh('rm -f .betterer.results'); rec('first_b', t(B))
    sh('git checkout -q .betterer.results')
    shutil.rmtree('.git/discern/evidence', ignore_errors=True); rec('first_d', t([D, 'standards']))
    # 2. unchanged re-run
    rec('rerun_b', t(B)); rec('rerun_d', t([D, 'standards']))
    sh('git diff --quiet HEAD')  # betterer must not have changed its results file
    # 3. one file changed and committed (the same commit for both)
    f = files[i % len(files)]
    sh(f'echo "// TODO round {i}" >> {f} && git commit -qam "round {i}"')
    # discern first: betterer rewrites .betterer.results when a result got worse, which would
    # leave discern a dirty work tree (measured, but through `git status`).
    rec('one_d', t([D, 'standards'])); rec('one_b', t(B))
    # (unmeasured) the developer records betterer's new results in that commit
    sh(f'{NM}/.bin/betterer -c .betterer.cjs --silent --update; git commit -q --amend -a --no-edit')
    # 4. CI on a fresh clone: no evidence, no cache
    shutil.rmtree(CI, ignore_errors=True)
    sh(f'git clone -q --no-local {W} {CI} && ln -s {NM} {CI}/node_modules')
    rec('ci_b', t(BCI, cwd=CI))
    shutil.rmtree(CI, ignore_errors=True); sh(f'git clone -q --no-local {W} {CI}')
    rec('ci_d', t([D, 'standards'], cwd=CI))
    shutil.rmtree(CI, ignore_errors=True)
    # back to the base commit for the next round
    sh(f'git reset -q --hard {BASE}')
    print(f'round {i}: ' + ' '.join(f'{k}={res[k][-1]*1000:.0f}' for k in res) + f'  load {os.getloadavg()[0]:.2f}', flush=True)

print(f'load at end {os.getloadavg()}   exit codes {dict((k, sorted(v)) for k, v in rcs.items())}')
for case in ['first', 'rerun', 'one', 'ci']:
    b = statistics.median(res[case + '_b']); d = statistics.median(res[case + '_d'])
    bc = statistics.median(cpu[case + '_b']); dc = statistics.median(cpu[case + '_d'])
    print(f"{case:6} betterer {b*1000:7.0f} ms   discern {d*1000:6.0f} ms   betterer/discern {b/d:6.1f}x"
          f"   (discern min {min(res[case+'_d'])*1000:.0f} max {max(res[case+'_d'])*1000:.0f})"
          f"   CPU betterer {bc*1000:.0f} ms discern {dc*1000:.0f} ms: {bc/dc:.1f}x")
