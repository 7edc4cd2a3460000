//! What `doctor --issue` removes before a report is pasted in public: host names (this machine's, and the
//! host field of journald lines), user names in home-folder paths (`/home/NAME`, `/Users/NAME`,
//! `C:\Users\NAME`) and this user's login name, IP addresses other than loopback and the unspecified address,
//! and tokens (`key=…`, `token: …`, `Bearer …`, `hf_…`, `sk-…`). Each is replaced by a placeholder (`<host>`,
//! `<user>`, `<ip>`, `<token>`) and counted, so the report can say what was removed.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

static HOME_PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(/home/|/Users/|[A-Z]:\\+Users\\+)([^/\\\s'\x22]+)").expect("valid regex")
});
static JOURNALD_HOST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^(?:\S+ +\d+ \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\S+) ([A-Za-z0-9][A-Za-z0-9._-]*) [A-Za-z0-9_.@/-]+(?:\[\d+\])?: ")
        .expect("valid regex")
});
static IPV4: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}\b")
        .expect("valid regex")
});
static IPV6: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:\b[0-9a-f]{1,4})?(?:::?[0-9a-f]{1,4}){2,7}\b").expect("valid regex")
});
static TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)\b([A-Za-z0-9_]*(?:api[_-]?key|token|secret|password|passwd|authorization)["']?\s*[=:]\s*["']?)(?:Bearer\s+)?[^\s"',\]]+|\bBearer\s+[A-Za-z0-9._~+/=-]{8,}|\b(?:hf|sk|ghp|gho|glpat)[-_][A-Za-z0-9_-]{16,}"#,
    )
    .expect("valid regex")
});

/// How many of each kind were replaced.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Redacted {
    pub hosts: usize,
    pub users: usize,
    pub ips: usize,
    pub tokens: usize,
}

impl Redacted {
    /// In words, for the report's last line.
    pub fn summary(&self) -> String {
        format!(
            "redacted: {} host name{}, {} user name{}, {} IP address{}, {} token{}",
            self.hosts,
            if self.hosts == 1 { "" } else { "s" },
            self.users,
            if self.users == 1 { "" } else { "s" },
            self.ips,
            if self.ips == 1 { "" } else { "es" },
            self.tokens,
            if self.tokens == 1 { "" } else { "s" },
        )
    }
}

/// What this machine calls itself and who runs vramdiff, to be found anywhere in the text.
#[derive(Debug, Default, Clone)]
pub struct Known {
    pub hosts: Vec<String>,
    pub users: Vec<String>,
}

impl Known {
    /// The host name (`/etc/hostname`, `$HOSTNAME`, `%COMPUTERNAME%`) and login name (`$USER`, `%USERNAME%`).
    pub fn this_machine() -> Known {
        let mut hosts = Vec::new();
        if let Ok(name) = std::fs::read_to_string("/etc/hostname") {
            hosts.push(name.trim().to_string());
        }
        for var in ["HOSTNAME", "COMPUTERNAME"] {
            hosts.extend(std::env::var(var).ok());
        }
        let users = ["USER", "USERNAME", "LOGNAME"]
            .into_iter()
            .filter_map(|v| std::env::var(v).ok())
            .collect();
        Known { hosts, users }
    }
}

fn ip_allowed(ip: &str) -> bool {
    matches!(ip, "127.0.0.1" | "0.0.0.0" | "::1" | "::")
}

/// `text` with every host name, user name, IP address and token replaced, and how many of each.
pub fn redact(text: &str, known: &Known) -> (String, Redacted) {
    let mut counts = Redacted::default();
    let mut hosts: BTreeSet<String> = known
        .hosts
        .iter()
        .filter(|h| h.len() >= 2 && h.as_str() != "localhost")
        .cloned()
        .collect();
    for c in JOURNALD_HOST.captures_iter(text) {
        if c[1].len() >= 2 && &c[1] != "localhost" {
            hosts.insert(c[1].to_string());
        }
    }
    let mut users: BTreeSet<String> = known
        .users
        .iter()
        .filter(|u| u.len() >= 3 && !matches!(u.as_str(), "root" | "ollama" | "user"))
        .cloned()
        .collect();
    for c in HOME_PATH.captures_iter(text) {
        if !matches!(&c[2], "Public" | "Shared" | "root" | "ollama") {
            users.insert(c[2].to_string());
        }
    }
    // Tokens first: a key may hold anything, an address or a name included.
    let mut out = TOKEN
        .replace_all(text, |c: &regex::Captures| {
            counts.tokens += 1;
            format!("{}<token>", c.get(1).map_or("", |m| m.as_str()))
        })
        .into_owned();
    out = IPV4
        .replace_all(&out, |c: &regex::Captures| {
            if ip_allowed(&c[0]) {
                c[0].to_string()
            } else {
                counts.ips += 1;
                "<ip>".to_string()
            }
        })
        .into_owned();
    out = IPV6
        .replace_all(&out, |c: &regex::Captures| {
            // Clock times (`09:43:26`) have no hex letters and at most two colons; an address has more.
            let m = &c[0];
            if ip_allowed(m) || m.matches(':').count() < 3 {
                m.to_string()
            } else {
                counts.ips += 1;
                "<ip>".to_string()
            }
        })
        .into_owned();
    // Longest first, so a name that contains another is replaced whole.
    let mut by_length = |names: BTreeSet<String>, placeholder: &str, count: &mut usize| {
        let mut names: Vec<String> = names.into_iter().collect();
        names.sort_by_key(|n| std::cmp::Reverse(n.len()));
        for name in names {
            let pattern = format!(r"(?i)\b{}\b", regex::escape(&name));
            let Ok(re) = Regex::new(&pattern) else {
                continue;
            };
            let found = re.find_iter(&out).count();
            if found > 0 {
                *count += found;
                out = re.replace_all(&out, placeholder).into_owned();
            }
        }
    };
    let mut hosts_count = 0;
    by_length(hosts, "<host>", &mut hosts_count);
    let mut users_count = 0;
    by_length(users, "<user>", &mut users_count);
    counts.hosts = hosts_count;
    counts.users = users_count;
    (out, counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_users_addresses_and_tokens_are_replaced_and_counted() {
        let text = "Dec 01 10:00:00 gpu-box-7 ollama[123]: msg=\"Listening on 192.168.1.23:11434\" \
                    model=/home/alice/.ollama/models/blobs/sha256-ab OLLAMA_API_KEY=abc123def \
                    C:\\Users\\Bob\\AppData\\Local\\Ollama at 09:43:26 from fe80::1ff:fe23:4567:890a \
                    and 127.0.0.1; Authorization: Bearer eyJhbGciOi.x hf_abcdefghijklmnopqrstu\n\
                    gpu-box-7 again, carol's shell";
        let known = Known {
            hosts: vec!["gpu-box-7".to_string()],
            users: vec!["carol".to_string()],
        };
        let (out, counts) = redact(text, &known);
        for secret in [
            "gpu-box-7",
            "192.168",
            "alice",
            "Bob",
            "abc123def",
            "fe80",
            "eyJhb",
            "hf_abc",
            "carol",
        ] {
            assert!(!out.contains(secret), "{secret} left in {out}");
        }
        assert!(
            out.contains("09:43:26") && out.contains("127.0.0.1"),
            "{out}"
        );
        assert!(out.contains("/home/<user>/.ollama/models"), "{out}");
        assert_eq!(
            counts,
            Redacted {
                hosts: 2,
                users: 3,
                ips: 2,
                tokens: 3
            }
        );
        assert_eq!(
            counts.summary(),
            "redacted: 2 host names, 3 user names, 2 IP addresses, 3 tokens"
        );
    }
}
