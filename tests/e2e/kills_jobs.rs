//! A job killed: a timed-out job is killed with its process group and nothing else; Ctrl-C
//! stops the running job and its group, and a second one exits at once.

use std::os::unix::process::CommandExt;

use crate::support::Fixture;
use crate::support::config::Config;

/// A job past its timeout is killed with its whole process group, and nothing else: an
/// unrelated process survives (`kill -KILL -<pgid>` through procps-ng would kill everything).
#[test]
fn a_timed_out_job_is_killed_with_its_group_and_nothing_else() {
    let mut bystander = std::process::Command::new("sleep")
        .arg("30")
        .process_group(0)
        .spawn()
        .unwrap();
    let slow = Config::new().staged_job("slow", "test", "sleep 20");
    let fixture = Fixture::new(slow.set("jobs.slow", "timeout", "1"));
    let run = fixture.run(&["test", "--json"]);
    assert_eq!(run.json()["ok"], false, "{}", run.stdout);
    assert!(
        bystander.try_wait().unwrap().is_none(),
        "an unrelated process survives the job's kill"
    );
    let _ = bystander.kill();
    let _ = bystander.wait();
}

#[test]
fn ctrl_c_stops_the_running_job_and_its_group_and_a_second_one_exits_at_once() {
    // The job records the pid of its own child, which must not outlive the interrupt.
    let slow = Config::new().staged_job("slow", "test", "sleep 60 & echo $! > child.pid; wait");
    let fixture = Fixture::new(slow.set("jobs.slow", "timeout", "120"));
    let pid_file = fixture.path().join("child.pid");
    let spawn = || {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_discern"));
        cmd.args(["test", "--json"])
            .current_dir(fixture.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        discern_tests::hermetic(&mut cmd, fixture.repo.home());
        cmd.env("DISCERN_CACHE_DIR", crate::support::cache_dir());
        cmd.spawn().unwrap()
    };
    let wait_for_pid = || {
        let started = std::time::Instant::now();
        loop {
            if let Some(pid) = std::fs::read_to_string(&pid_file)
                .ok()
                .and_then(|t| t.trim().parse::<i32>().ok())
            {
                return pid;
            }
            assert!(started.elapsed().as_secs() < 30, "the job never started");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    let interrupt = |child: &std::process::Child| {
        let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    };
    let alive = |pid: i32| {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .contains(") Z ")
    };

    let child = spawn();
    let job_child = wait_for_pid();
    let started = std::time::Instant::now();
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed().as_secs() < 20,
        "Ctrl-C stops the run, not the job's 60 s"
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["ok"], false, "{json}");
    assert!(json.to_string().contains("cancelled"), "{json}");
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(
        !alive(job_child),
        "the job's own child was killed with its group"
    );

    // A second interrupt while the first is being handled ends the process at once.
    std::fs::remove_file(&pid_file).unwrap();
    let child = spawn();
    let job_child = wait_for_pid();
    interrupt(&child);
    interrupt(&child);
    let status = child.wait_with_output().unwrap().status;
    assert!(
        status.code() == Some(130) || status.code() == Some(1),
        "{status:?}"
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    if alive(job_child) {
        // Exiting at once may leave the job's group behind; kill it here, never the test's.
        let pid = rustix::process::Pid::from_raw(job_child).unwrap();
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
}
