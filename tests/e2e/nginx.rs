//! A real Bazel HTTP cache for the remote cache tests: Debian's nginx with its WebDAV module,
//! configured as Bazel's documentation configures it (`dav_methods PUT`,
//! `create_full_put_path on`, a `client_max_body_size`, a `root`), started on a free loopback
//! port with its own prefix, config, logs and storage in a temporary folder, as one process
//! (`master_process off`) killed on drop.

use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The token the `/private/` location wants (`Authorization: Bearer <TOKEN>`).
pub const TOKEN: &str = "test-token";

pub struct Nginx {
    child: Child,
    dir: tempfile::TempDir,
    port: u16,
    https: bool,
}

/// A server certificate and its key (PEM files) for an `https://` nginx.
pub struct Tls<'a> {
    pub certificate: &'a Path,
    pub key: &'a Path,
}

impl Nginx {
    pub fn start() -> Self {
        Self::start_with(None)
    }

    /// nginx serving the same locations over HTTPS only, with `tls`'s certificate.
    pub fn start_https(tls: &Tls) -> Self {
        Self::start_with(Some(tls))
    }

    fn start_with(tls: Option<&Tls>) -> Self {
        let nginx = binary();
        let mut last = String::new();
        // A free port can be taken between asking for it and nginx binding it: try again.
        for _ in 0..5 {
            let dir = tempfile::tempdir().expect("a temporary folder");
            let port = free_port();
            std::fs::create_dir_all(dir.path().join("root")).expect("the storage folder");
            std::fs::write(dir.path().join("nginx.conf"), config(dir.path(), port, tls))
                .expect("the config");
            let child = Command::new(&nginx)
                .arg("-p")
                .arg(dir.path())
                .arg("-c")
                .arg(dir.path().join("nginx.conf"))
                .arg("-e")
                .arg(dir.path().join("error.log"))
                .args(["-g", "daemon off;"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("{} cannot be started: {e}", nginx.display()));
            let https = tls.is_some();
            let mut server = Nginx {
                child,
                dir,
                port,
                https,
            };
            match server.ready() {
                Ok(()) => return server,
                Err(why) => last = why,
            }
        }
        panic!("nginx did not start: {last}");
    }

    /// The cache's base URL (Bazel's `--remote_cache=http://host:port/cache`).
    pub fn url(&self) -> String {
        format!("{}://127.0.0.1:{}/cache", self.scheme(), self.port)
    }

    fn scheme(&self) -> &'static str {
        if self.https { "https" } else { "http" }
    }

    /// The base URL of the location that wants [`TOKEN`].
    pub fn private_url(&self) -> String {
        format!("{}://127.0.0.1:{}/private", self.scheme(), self.port)
    }

    /// The file nginx keeps `<base>/<kind>/<hash>` in.
    pub fn file(&self, kind: &str, hash: &str) -> PathBuf {
        self.dir.path().join("root/cache").join(kind).join(hash)
    }

    /// Every file under the storage root.
    pub fn stored(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut stack = vec![self.dir.path().join("root")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    found.push(path);
                }
            }
        }
        found
    }

    /// Wait until nginx accepts connections, or say why it cannot.
    fn ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                let log = std::fs::read_to_string(self.dir.path().join("error.log"));
                return Err(format!(
                    "nginx exited ({status}): {}",
                    log.unwrap_or_default()
                ));
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err("nginx did not listen within 20 s".to_owned())
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// nginx, or a failure that says how to get it (never a skip).
fn binary() -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    let dirs = on_path
        .into_iter()
        .chain(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(PathBuf::from));
    for dir in dirs {
        let candidate = dir.join("nginx");
        if candidate.is_file() {
            return candidate;
        }
    }
    panic!(
        "the remote cache tests need nginx with its WebDAV module (Debian's `nginx`): run \
         `scripts/test`, which installs it, or `apt-get install -y nginx`"
    );
}

fn free_port() -> u16 {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("a loopback port");
    listener.local_addr().expect("its address").port()
}

/// Running as root, nginx's workers would drop to `nobody`, who cannot write the temporary
/// folder: keep them as the user the tests run as.
fn user_line(dir: &Path) -> &'static str {
    let owner = std::fs::metadata(dir).map(|m| m.uid()).unwrap_or(1);
    if owner == 0 { "user root;" } else { "" }
}

fn config(dir: &Path, port: u16, tls: Option<&Tls>) -> String {
    let d = dir.display();
    let user = user_line(dir);
    let listen = match tls {
        None => format!("listen 127.0.0.1:{port};"),
        Some(tls) => format!(
            "listen 127.0.0.1:{port} ssl;\n        ssl_certificate {};\n        ssl_certificate_key {};",
            tls.certificate.display(),
            tls.key.display()
        ),
    };
    format!(
        r#"{user}
# One process: killing the child stops the server whole, no worker is left behind.
master_process off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log info;
events {{ worker_connections 64; }}
http {{
    access_log {d}/access.log;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    default_type application/octet-stream;
    server {{
        {listen}
        # As Bazel's documentation configures nginx for an HTTP cache.
        location /cache/ {{
            root {d}/root;
            dav_methods PUT;
            create_full_put_path on;
            client_max_body_size 1G;
            allow all;
        }}
        location /private/ {{
            if ($http_authorization != "Bearer {TOKEN}") {{ return 401; }}
            root {d}/root;
            dav_methods PUT;
            create_full_put_path on;
            client_max_body_size 1G;
        }}
    }}
}}
"#
    )
}
