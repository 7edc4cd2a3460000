//! `vramdiff doctor` end to end: the log found in each place it is looked for — journald's system and user
//! units (a fake `journalctl` first on `PATH`), `~/.ollama/logs/server.log` (a temporary `HOME`),
//! `%LOCALAPPDATA%\Ollama\server*.log`, `docker logs` of an `ollama/ollama` container (a fake `docker`),
//! `$OLLAMA_LOGS` — its last load reported with a fake `nvidia-smi` (or, on an AMD machine, a fake
//! `rocm-smi`) and a loopback `/api/ps` server observed now; `--issue` with the test's host name, user name,
//! address and token redacted; commands that hang stopped at `--timeout` (a short bound here, and no
//! assertion on elapsed time) and named, the search going on; `-q` and `--color`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::follow::{fake_named, ollama_server, FAKE_NVIDIA_SMI};
use crate::util::{root, scratch, stderr, stdout};

const FOUNDING: &str = "sample-logs/founding-k80-gemma3-12b.log";
const HOST: &str = "lab-rig-42";
const USER: &str = "jdoe";
const ADDRESS: &str = "10.20.30.40";
const TOKEN: &str = "hf_Zx9Qw8Er7Ty6Ui5Op4As3Df2";

/// The founding log as this test machine's server wrote it: its address, a user's model folder, and a line
/// the findings quote that names the host, a peer and a token.
fn machine_log() -> String {
    let log = std::fs::read_to_string(root().join(FOUNDING)).unwrap();
    let mut out = String::new();
    for (i, line) in log.lines().enumerate() {
        out.push_str(
            &line
                .replace("127.0.0.1:11434", &format!("{ADDRESS}:11434"))
                .replace(
                    "/usr/share/ollama/.ollama",
                    &format!("/home/{USER}/.ollama"),
                ),
        );
        if i + 1 == 29 {
            out.push_str(&format!(" host={HOST} peer={ADDRESS} hf={TOKEN}"));
        }
        out.push('\n');
    }
    out
}

/// A fresh machine: a temporary folder with `bin/` (fakes) and `home/jdoe` (HOME).
struct Machine {
    dir: PathBuf,
    home: PathBuf,
    bin: PathBuf,
}

impl Machine {
    fn new(tag: &str) -> Machine {
        let dir = scratch(&format!("doctor-{tag}"));
        let home = dir.join("home").join(USER);
        std::fs::create_dir_all(&home).unwrap();
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        Machine { dir, home, bin }
    }

    fn fake(&self, name: &str, script: &str) {
        fake_named(&self.dir, name, script);
    }

    /// Run `vramdiff doctor ARGS` with only this machine's environment.
    fn doctor(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_vramdiff"));
        command
            .arg("doctor")
            .args(args)
            .env_clear()
            .env("PATH", &self.bin)
            .env("HOME", &self.home)
            .env("HOSTNAME", HOST)
            .env("USER", USER)
            .env("VRAMDIFF_NO_MODEL_SEARCH", "1")
            .current_dir(&self.dir)
            .stdin(Stdio::null());
        for (k, v) in env {
            command.env(k, v);
        }
        command.output().unwrap()
    }
}

impl Drop for Machine {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A shell script that prints the file `log` (to standard error when `stderr`).
fn cat_script(log: &Path, condition: &str, stderr: bool) -> String {
    format!(
        "#!/bin/sh\n{condition}\nexec /bin/cat '{}'{}\n",
        log.display(),
        if stderr { " >&2" } else { "" }
    )
}

fn assert_founding_load(out: &Output, origin: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains(&format!("reading {origin}")), "{err}");
    assert!(err.contains("the last of 1 load in"), "{err}");
    let report = stdout(out);
    assert!(report.starts_with("Load 1: "), "{report}");
    assert!(report.contains("needless-split"), "{report}");
}

#[test]
fn the_system_unit_of_journald() {
    let m = Machine::new("journal");
    let log = m.dir.join("journal.txt");
    std::fs::write(&log, machine_log()).unwrap();
    // Asked for the system unit (no --user), with -o cat: anything else is not what doctor should run.
    m.fake(
        "journalctl",
        &cat_script(
            &log,
            "case \"$*\" in *--user*) echo '-- No entries --'; exit 0;; esac\n[ \"$*\" = '-u ollama --no-pager -o cat -n 100000' ] || exit 9",
            false,
        ),
    );
    let out = m.doctor(&["--no-ollama"], &[]);
    assert_founding_load(&out, "journalctl -u ollama");
    assert!(stderr(&out).contains("no GPU capture"), "{}", stderr(&out));
}

#[test]
fn the_user_unit_of_journald() {
    let m = Machine::new("journal-user");
    let log = m.dir.join("journal.txt");
    std::fs::write(&log, machine_log()).unwrap();
    m.fake(
        "journalctl",
        &cat_script(
            &log,
            "case \"$*\" in *--user*) ;; *) echo '-- No entries --'; exit 0;; esac",
            false,
        ),
    );
    let out = m.doctor(&["--no-ollama"], &[]);
    assert_founding_load(&out, "journalctl --user -u ollama");
}

#[test]
fn the_home_folder_log_observed_now_and_written_as_a_redacted_issue() {
    let m = Machine::new("home");
    let logs = m.home.join(".ollama").join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(logs.join("server.log"), machine_log()).unwrap();
    m.fake("nvidia-smi", FAKE_NVIDIA_SMI);
    let (url, requests) = ollama_server(12_000_000_000, 10_000_000_000);

    let out = m.doctor(&["--ollama", &url], &[]);
    let origin = logs.join("server.log").display().to_string();
    assert_founding_load(&out, &origin);
    let report = stdout(&out);
    // The capture taken now joined the load (the fake's figures), and /api/ps was read.
    assert!(report.contains("nvidia-smi (now)"), "{report}");
    assert!(report.contains("617 MiB / 11441 MiB"), "{report}");
    assert!(report.contains("/api/ps"), "{report}");
    assert_eq!(
        requests.lock().unwrap().as_slice(),
        ["GET /api/ps HTTP/1.1"]
    );

    let out = m.doctor(&["--ollama", &url, "--issue"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let issue = stdout(&out);
    for secret in [HOST, USER, ADDRESS, TOKEN] {
        assert!(!issue.contains(secret), "{secret} in the issue:\n{issue}");
    }
    assert!(
        issue.starts_with("### vramdiff doctor: gemma3\n"),
        "{issue}"
    );
    assert!(issue.contains("- **Versions:** vramdiff "), "{issue}");
    assert!(issue.contains("#### Findings"), "{issue}");
    // The per-GPU tables: the devices, and what the capture taken now saw.
    assert!(issue.contains("#### Devices"), "{issue}");
    assert!(issue.contains("#### Observed (nvidia-smi)"), "{issue}");
    assert!(issue.contains("617 MiB / 11441 MiB"), "{issue}");
    // Ten evidence lines at most before the fold; the quoted line with its secrets replaced.
    let evidence = issue.split("#### Evidence\n\n```text\n").nth(1).unwrap();
    let evidence = evidence.split("```").next().unwrap();
    assert!(evidence.lines().count() <= 10);
    assert!(
        evidence.contains("buffer=CUDA0 size=\"136.7 MiB\" host=<host> peer=<ip> hf=<token>"),
        "{evidence}"
    );
    assert!(
        issue.contains("<details><summary>The whole report"),
        "{issue}"
    );
    assert!(
        issue.contains("/home/<user>/.ollama/logs/server.log"),
        "{issue}"
    );
    let last = issue.lines().last().unwrap();
    assert!(last.starts_with("<sub>Redacted: "), "{last}");
    assert!(last.contains("IP address"), "{last}");
}

#[test]
fn the_newest_server_log_of_localappdata() {
    let m = Machine::new("windows");
    let dir = m.dir.join("AppData").join("Local").join("Ollama");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("server-1.log"), "an older, rotated log\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    std::fs::write(dir.join("server.log"), machine_log()).unwrap();
    let local = m.dir.join("AppData").join("Local").display().to_string();
    let out = m.doctor(&["--no-ollama"], &[("LOCALAPPDATA", &local)]);
    assert_founding_load(&out, &dir.join("server.log").display().to_string());
}

#[test]
fn docker_logs_of_a_running_ollama_container() {
    let m = Machine::new("docker");
    let log = m.dir.join("container.txt");
    std::fs::write(&log, machine_log()).unwrap();
    m.fake(
        "docker",
        &format!(
            "#!/bin/sh\ncase \"$1\" in\nps) [ \"$*\" = 'ps --filter ancestor=ollama/ollama --format {{{{.Names}}}}' ] || exit 9; echo ollama-gpu ;;\nlogs) [ \"$*\" = 'logs --tail 100000 ollama-gpu' ] || exit 9; exec /bin/cat '{}' >&2 ;;\n*) exit 9 ;;\nesac\n",
            log.display()
        ),
    );
    let out = m.doctor(&["--no-ollama"], &[]);
    assert_founding_load(&out, "docker logs ollama-gpu");
}

#[test]
fn ollama_logs_or_a_path_given_and_nothing_found() {
    let m = Machine::new("given");
    let log = m.dir.join("elsewhere.log");
    std::fs::write(&log, machine_log()).unwrap();
    let path = log.display().to_string();
    let out = m.doctor(&["--no-ollama"], &[("OLLAMA_LOGS", &path)]);
    assert_founding_load(&out, &path);
    let out = m.doctor(&["--no-ollama", &path], &[]);
    assert_founding_load(&out, &path);

    let out = m.doctor(&["--no-ollama"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    for place in [
        "tried journalctl -u ollama: journalctl not found",
        "tried journalctl --user -u ollama: journalctl not found",
        ".ollama/logs/server.log: ",
        "tried docker ps: docker not found",
        "no log found; name it: vramdiff doctor LOG",
    ] {
        assert!(err.contains(place), "{place}: {err}");
    }
}

/// `vramdiff` with no file and a terminal on standard input (made by `script`, from Debian's essential
/// bsdutils) looks for the log instead of waiting, and says so on stderr in one line.
#[test]
fn no_file_on_a_terminal_runs_doctor_with_a_note() {
    let m = Machine::new("terminal");
    let logs = m.home.join(".ollama").join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(logs.join("server.log"), machine_log()).unwrap();
    let transcript = m.dir.join("typescript");
    let out = Command::new("/usr/bin/script")
        .args(["-qec", env!("CARGO_BIN_EXE_vramdiff")])
        .arg(&transcript)
        .env_clear()
        .env("PATH", &m.bin)
        .env("HOME", &m.home)
        .env("OLLAMA_HOST", "127.0.0.1:9")
        .env("VRAMDIFF_NO_MODEL_SEARCH", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    assert!(
        screen.contains(
            "vramdiff: no log given and standard input is a terminal: looking for the Ollama log"
        ),
        "{screen}"
    );
    assert!(screen.contains("Load 1: "), "{screen}");
    assert!(screen.contains("needless-split"), "{screen}");
}

/// rocm-smi as vramdiff runs it (`--showmeminfo vram --showbus --json`): one JSON object per card, every value
/// a string, the keys rocm-smi prints (`PCI Bus`, `VRAM Total Memory (B)`, `VRAM Total Used Memory (B)`). No
/// real rocm-smi capture is in the corpus; the shape is the one `src/smi/rocm.rs` and `tests/smi.rs` read
/// (docs/log-formats.md §7.6). The figures are a 32 GiB Radeon AI PRO R9700 holding sample 034's buffers
/// (8.35 GiB) and the driver's own use.
const FAKE_ROCM_SMI: &str = r#"#!/bin/sh
[ "$*" = '--showmeminfo vram --showbus --json' ] || exit 9
echo '{"card0": {"PCI Bus": "0000:03:00.0", "VRAM Total Memory (B)": "34342961152", "VRAM Total Used Memory (B)": "9146986496"}}'
"#;

const ROCM_LOG: &str = "sample-logs/034-journald-rocm-r9700-newengine-actual.log";

/// An AMD machine: no nvidia-smi, rocm-smi on PATH. Doctor tries nvidia-smi, then reads rocm-smi now, and the
/// capture joins the log's ROCm0.
#[test]
fn an_amd_machine_observed_by_rocm_smi() {
    let m = Machine::new("rocm");
    m.fake("rocm-smi", FAKE_ROCM_SMI);
    let log = root().join(ROCM_LOG).display().to_string();
    let out = m.doctor(&["--no-ollama", &log], &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("no GPU capture"), "{err}");
    let report = stdout(&out);
    // 9146986496 B = 8.52 GiB used of 34342961152 B = 32752 MiB, beside 8.35 GiB of ROCm0 buffers.
    assert!(
        report.contains("ROCm0   GPU (index)          –  8.35 GiB   8.52 GiB / 32752 MiB"),
        "{report}"
    );
    assert!(
        report.contains("capture = rocm-smi (now):1 (rocm-smi-json)"),
        "{report}"
    );
    // The notes name the monitor that was run.
    assert!(
        report.contains(
            "note: rocm-smi capture rocm-smi (now):1 matched to the runner's devices by index"
        ),
        "{report}"
    );
    assert!(!report.contains("nvidia-smi"), "{report}");
    // Asked for rocm-smi alone, the same.
    let only = m.doctor(&["--no-ollama", "--capture", "rocm-smi", &log], &[]);
    assert_eq!(stdout(&only), report);
}

/// A loopback server that accepts and never answers: an /api/ps that hangs.
fn silent_server() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    url
}

/// Every command doctor runs hangs here (journalctl, nvidia-smi, rocm-smi) and /api/ps never answers: each is
/// stopped at --timeout, named on stderr, and doctor goes on to the log in the home folder and reports it.
/// With -q the report alone.
#[test]
fn hung_commands_are_stopped_named_and_passed() {
    let m = Machine::new("hung");
    let logs = m.home.join(".ollama").join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(logs.join("server.log"), machine_log()).unwrap();
    let hang = "#!/bin/sh\nexec /bin/sleep 600\n";
    for tool in ["journalctl", "nvidia-smi", "rocm-smi"] {
        m.fake(tool, hang);
    }
    let url = silent_server();
    let args = ["--timeout", "0.2", "--ollama", &url];
    let out = m.doctor(&args, &[]);
    let origin = logs.join("server.log").display().to_string();
    assert_founding_load(&out, &origin);
    let err = stderr(&out);
    for said in [
        "vramdiff: timed out: journalctl -u ollama: `journalctl -u ollama --no-pager -o cat -n 100000` took longer than 0.2 s and was stopped",
        "vramdiff: timed out: journalctl --user -u ollama: `journalctl --user -u ollama --no-pager -o cat -n 100000` took longer than 0.2 s and was stopped",
        "nvidia-smi: `nvidia-smi --query-gpu=index,uuid,pci.bus_id,memory.used,memory.total --format=csv,nounits` took longer than 0.2 s and was stopped",
        "rocm-smi: `rocm-smi --showmeminfo vram --showbus --json` took longer than 0.2 s and was stopped",
        &format!("{url}/api/ps"),
    ] {
        assert!(err.contains(said), "{said}\n{err}");
    }
    // The /api/ps request counts whole seconds: it was given one, and said why it gave nothing.
    let ps = err.lines().find(|l| l.contains("/api/ps")).unwrap();
    assert!(
        ps.contains("the timeout of the request was reached"),
        "{ps}"
    );
    assert!(
        !stdout(&out).contains("/api/ps"),
        "nothing read from Ollama"
    );

    let quiet = m.doctor(&[&args[..], &["-q"]].concat(), &[]);
    assert_eq!(quiet.status.code(), Some(0));
    assert_eq!(stderr(&quiet), "");
    assert_eq!(stdout(&quiet), stdout(&out));
}

/// doctor's terminal report painted with --color (its --issue block, Markdown, never).
#[test]
fn doctor_paints_its_report_not_its_issue() {
    let m = Machine::new("color");
    let log = m.dir.join("server.log");
    std::fs::write(&log, machine_log()).unwrap();
    let path = log.display().to_string();
    let out = m.doctor(&["--no-ollama", "--color", "always", &path], &[]);
    assert!(
        stdout(&out).contains("  \x1b[33mwarning\x1b[0m needless-split:"),
        "{}",
        stdout(&out)
    );
    let issue = m.doctor(&["--no-ollama", "--color", "always", "--issue", &path], &[]);
    assert_eq!(issue.status.code(), Some(0));
    assert!(!stdout(&issue).contains('\x1b'));
}
