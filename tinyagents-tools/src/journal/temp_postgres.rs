//! [`TempPostgres`]: a throwaway PostgreSQL server for tests of the
//! PostgreSQL journal (features `testkit` and `journal-postgres`).

use std::ffi::OsStr;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use std::{env, fs};

/// The environment variable naming a server to use instead of starting one.
const URL_VAR: &str = "TINYAGENTS_TEST_POSTGRES_URL";

/// How long the server may take to accept connections.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// How many ports are tried when another process takes the one picked.
const PORT_ATTEMPTS: usize = 3;

/// A PostgreSQL server of its own for one test: a fresh cluster in a
/// temporary directory, listening on 127.0.0.1 only, every local user
/// trusted. Dropping it stops the server and removes the directory.
///
/// When `TINYAGENTS_TEST_POSTGRES_URL` is set, [`start`](TempPostgres::start)
/// starts nothing and hands out that URL; dropping it stops nothing.
///
/// ```no_run
/// use tinyagents_tools::testkit::TempPostgres;
///
/// let server = TempPostgres::start().unwrap_or_else(|e| panic!("{e}"));
/// // connect to server.url(): postgres://postgres@127.0.0.1:PORT/postgres
/// # let _ = server.url();
/// ```
#[derive(Debug)]
pub struct TempPostgres {
    url: String,
    cluster: Option<Cluster>,
}

/// A cluster this process made, and how to run its programs.
#[derive(Debug)]
struct Cluster {
    dir: PathBuf,
    bin: PathBuf,
    as_postgres: bool,
}

impl TempPostgres {
    /// Starts a server and waits until it accepts connections (up to 30
    /// s). The error says what is missing (PostgreSQL's server programs,
    /// with the command that installs them) or what the server logged.
    ///
    /// Run as root, the server runs as the `postgres` user, since
    /// PostgreSQL refuses to run as root.
    pub fn start() -> Result<TempPostgres, String> {
        if let Some(url) = env::var(URL_VAR).ok().filter(|url| !url.is_empty()) {
            return Ok(TempPostgres { url, cluster: None });
        }
        let bin = server_bin_dir()?;
        let dir = temp_dir()?;
        let mut server = TempPostgres {
            url: String::new(),
            cluster: Some(Cluster {
                dir,
                bin,
                as_postgres: false,
            }),
        };
        let cluster = server.cluster.as_mut().expect("just set");
        cluster.as_postgres = owned_by_root(&cluster.dir);
        if cluster.as_postgres {
            cluster.give_to_postgres()?;
        }
        cluster.init()?;
        let port = cluster.start()?;
        server.url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
        Ok(server)
    }

    /// The server's URL: `postgres://postgres@127.0.0.1:PORT/postgres`, or
    /// the one `TINYAGENTS_TEST_POSTGRES_URL` names.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for TempPostgres {
    fn drop(&mut self) {
        if let Some(cluster) = self.cluster.take() {
            if cluster.data().join("postmaster.pid").exists() {
                let _ = cluster
                    .command("pg_ctl")
                    .arg("-D")
                    .arg(cluster.data())
                    .args(["stop", "-m", "immediate", "-w"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
            let _ = fs::remove_dir_all(&cluster.dir);
        }
    }
}

impl Cluster {
    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn log(&self) -> PathBuf {
        self.dir.join("server.log")
    }

    /// Hands the directory to the `postgres` user, who runs the server.
    fn give_to_postgres(&self) -> Result<(), String> {
        let output = Command::new("chown")
            .args(["-R", "postgres:"])
            .arg(&self.dir)
            .output()
            .map_err(|e| format!("cannot run chown: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "PostgreSQL refuses to run as root, and {} cannot be given to the postgres user \
                 (create that user, or run the tests as another user): {}",
                self.dir.display(),
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        Ok(())
    }

    /// Creates the cluster: superuser `postgres`, every local connection
    /// trusted.
    fn init(&self) -> Result<(), String> {
        let output = run(self
            .command("initdb")
            .arg("-D")
            .arg(self.data())
            .args(["-U", "postgres", "-A", "trust", "-E", "UTF8"])
            .args(["--locale=C", "--no-sync"]))?;
        if !output.status.success() {
            return Err(format!(
                "initdb failed ({}):\n{}{}",
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        Ok(())
    }

    /// Starts the server on a free port of 127.0.0.1, its unix socket in
    /// the directory, and waits until it accepts connections.
    fn start(&self) -> Result<u16, String> {
        let mut last = String::new();
        for _ in 0..PORT_ATTEMPTS {
            let port = free_port()?;
            let options = format!(
                "-F -c listen_addresses=127.0.0.1 -p {port} -k {} -c shared_buffers=16MB",
                shell_quote(self.dir.as_os_str())
            );
            let output = run(self
                .command("pg_ctl")
                .arg("-D")
                .arg(self.data())
                .arg("-l")
                .arg(self.log())
                .args(["-w", "-t", &READY_TIMEOUT.as_secs().to_string(), "-o"])
                .arg(options)
                .arg("start"))?;
            if output.status.success() && accepts_connections(port) {
                return Ok(port);
            }
            let log = fs::read_to_string(self.log()).unwrap_or_default();
            last = format!(
                "the PostgreSQL server did not start ({}):\n{}{}\nserver log {}:\n{log}",
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr),
                self.log().display()
            );
            if !log.contains("could not bind") {
                break;
            }
        }
        Err(last)
    }

    /// A command running one of the server's programs, as the `postgres`
    /// user when this process is root.
    fn command(&self, program: &str) -> Command {
        let program = self.bin.join(program);
        let mut command = if !self.as_postgres {
            Command::new(program)
        } else if let Some(runuser) = find_program("runuser") {
            let mut command = Command::new(runuser);
            command.args(["-u", "postgres", "--"]).arg(program);
            command
        } else {
            // The arguments added later become the shell's "$0" and "$@".
            let mut command = Command::new("su");
            command
                .args([
                    "-s",
                    "/bin/sh",
                    "-c",
                    "exec \"$0\" \"$@\"",
                    "postgres",
                    "--",
                ])
                .arg(program);
            command
        };
        command.current_dir(&self.dir).stdin(Stdio::null());
        command
    }
}

fn run(command: &mut Command) -> Result<Output, String> {
    command
        .output()
        .map_err(|e| format!("cannot run {:?}: {e}", command.get_program()))
}

/// Where `initdb` and `pg_ctl` are: the newest `/usr/lib/postgresql/*/bin`
/// (Debian's layout), or the directory of `initdb` on `PATH`.
fn server_bin_dir() -> Result<PathBuf, String> {
    let newest = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.to_owned();
            let bin = entry.path().join("bin");
            let number: Vec<u32> = version
                .split('.')
                .map(|part| part.parse().ok())
                .collect::<Option<_>>()?;
            (bin.join("initdb").is_file() && bin.join("pg_ctl").is_file()).then_some((number, bin))
        })
        .max();
    if let Some((_, bin)) = newest {
        return Ok(bin);
    }
    if let Some(bin) = find_program("initdb")
        .and_then(|initdb| initdb.parent().map(Path::to_path_buf))
        .filter(|bin| bin.join("pg_ctl").is_file())
    {
        return Ok(bin);
    }
    Err(format!(
        "PostgreSQL's server programs (initdb, pg_ctl) are in neither /usr/lib/postgresql/*/bin \
         nor PATH: install them (Debian, Ubuntu: `apt-get install postgresql`; Fedora: \
         `dnf install postgresql-server`; macOS: `brew install postgresql`), or set {URL_VAR} \
         to the URL of a server to use"
    ))
}

/// `name` on `PATH`, or in the system directories root's `PATH` has.
fn find_program(name: &str) -> Option<PathBuf> {
    let path = env::var_os("PATH").unwrap_or_default();
    env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// A new directory under the system's temporary directory.
fn temp_dir() -> Result<PathBuf, String> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = env::temp_dir().join(format!(
        "tinyagents-pg-{}-{}-{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// True when `dir`, just created by this process, belongs to root: this
/// process runs as root.
#[cfg(unix)]
fn owned_by_root(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(dir).is_ok_and(|meta| meta.uid() == 0)
}

#[cfg(not(unix))]
fn owned_by_root(_dir: &Path) -> bool {
    false
}

/// A port of 127.0.0.1 nothing listens on now.
fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .map_err(|e| format!("cannot find a free port on 127.0.0.1: {e}"))?;
    listener
        .local_addr()
        .map(|addr| addr.port())
        .map_err(|e| format!("cannot find a free port on 127.0.0.1: {e}"))
}

/// Waits until 127.0.0.1:`port` accepts a connection, up to 30 s.
fn accepts_connections(port: u16) -> bool {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        if TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_ok() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `text` as one word of a POSIX shell command.
fn shell_quote(text: &OsStr) -> String {
    format!("'{}'", text.to_string_lossy().replace('\'', r"'\''"))
}
