//! A real OCI registry for the registry producer tests: Debian's `docker-registry` (the CNCF
//! distribution registry 2.8), on a free loopback port with its config and filesystem storage
//! in a temporary folder, killed on drop. It can be stopped and started again on the same port
//! with the same storage (a registry that is down, then back).

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BINARY: &str = "/usr/bin/docker-registry";

pub struct Registry {
    child: Option<Child>,
    dir: tempfile::TempDir,
    port: u16,
}

impl Registry {
    pub fn start() -> Self {
        discern_tests::ensure_debian_tool("docker-registry", "docker-registry");
        let mut last = String::new();
        // A free port can be taken between asking for it and the registry binding it.
        for _ in 0..5 {
            let mut registry = Registry {
                child: None,
                dir: tempfile::tempdir().expect("a temporary folder"),
                port: free_port(),
            };
            match registry.serve() {
                Ok(()) => return registry,
                Err(why) => last = why,
            }
        }
        panic!("docker-registry did not start: {last}");
    }

    /// `127.0.0.1:PORT`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `oci://127.0.0.1:PORT/REPOSITORY:TAG`.
    pub fn reference(&self, repository: &str, tag: &str) -> String {
        format!("oci://{}/{repository}:{tag}", self.address())
    }

    /// The file the registry keeps blob `hex` (sha256) in.
    pub fn blob_file(&self, hex: &str) -> PathBuf {
        self.dir
            .path()
            .join("storage/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }

    /// Stop serving (the storage stays).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Serve again on the same port with the same storage.
    pub fn restart(&mut self) {
        self.stop();
        self.serve().expect("docker-registry starts again");
    }

    fn serve(&mut self) -> Result<(), String> {
        let config = self.dir.path().join("config.yml");
        std::fs::write(&config, config_text(self.dir.path(), self.port)).expect("the config");
        let child = Command::new(BINARY)
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{BINARY} cannot be started: {e}"));
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                self.child = None;
                return Err(format!("docker-registry exited ({status})"));
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.stop();
        Err("docker-registry did not listen within 20 s".to_owned())
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}

fn free_port() -> u16 {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("a loopback port");
    listener.local_addr().expect("its address").port()
}

fn config_text(dir: &Path, port: u16) -> String {
    format!(
        "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
        dir.join("storage").display()
    )
}
