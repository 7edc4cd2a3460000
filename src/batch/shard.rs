//! `batch --shard K/N`: a deterministic share of the inputs, so that N machines (or N tasks of a distributed
//! engine) can each run `vramdiff batch` on the same input list and together read every file exactly once.
//!
//! A file belongs to shard `FNV-1a-64(key) mod N + 1`, where `key` is the file's path **relative to its input
//! root**, its components joined with `/` (whatever the OS's separator), as UTF-8 (lossily for a name that is not):
//!
//! - a folder argument (`batch /mnt/logs`): the path below that folder, `node-17/ollama.log.gz`;
//! - a glob (`batch '/mnt/logs/*/ollama.log'`): the path below the pattern's literal directory (the components
//!   before the first one holding `*`, `?` or `[`), `node-17/ollama.log`;
//! - a file named explicitly: its file name, `ollama.log`.
//!
//! So the machine's absolute prefix (`/mnt/logs` here, `/data/fleet/logs` on the next node, `C:\logs` on
//! Windows) never enters the hash, and the same file lands in the same shard on every machine and OS. FNV-1a 64
//! (offset basis 0xcbf29ce484222325, prime 0x100000001b3) is used because it is defined in a few lines, fixed
//! forever, and any language reproduces it (the Dask example does, in Python). Files named explicitly that share
//! a name all land in one shard: correct, but unbalanced — name a folder or a glob instead.

use std::fmt;
use std::path::{Component, Path};

/// `K/N`: this run takes the K-th of N shares (1 ≤ K ≤ N).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based.
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Whether the file with this shard key is this shard's.
    pub fn takes(&self, key: &str) -> bool {
        shard_of(key, self.count) == self.index
    }

    /// `-K-of-N`, appended to the names of the files a sharded run writes so that shards writing into one folder
    /// never overwrite each other.
    pub fn suffix(&self) -> String {
        format!("-{}-of-{}", self.index, self.count)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// `2/8`; anything else is a usage error that says what is expected.
    fn from_str(text: &str) -> Result<Shard, String> {
        let usage = || format!("'{text}' is not K/N with 1 <= K <= N (e.g. 1/4)");
        let (k, n) = text.trim().split_once('/').ok_or_else(usage)?;
        let k: u32 = k.trim().parse().map_err(|_| usage())?;
        let n: u32 = n.trim().parse().map_err(|_| usage())?;
        if k == 0 || n == 0 || k > n {
            return Err(usage());
        }
        Ok(Shard { index: k, count: n })
    }
}

/// FNV-1a, 64 bits, over `bytes`.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The shard (1-based) of the file with this key among `count` shards.
pub fn shard_of(key: &str, count: u32) -> u32 {
    (fnv1a64(key.as_bytes()) % u64::from(count.max(1))) as u32 + 1
}

/// `path`'s components below `root`, joined with `/`; `None` when `path` is not below `root`.
pub fn relative_key(path: &Path, root: &Path) -> Option<String> {
    let below = path.strip_prefix(root).ok()?;
    let parts: Vec<String> = below
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// The key of a file named explicitly: its file name (the whole argument when it has none, e.g. `-`).
pub fn name_key(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string_lossy().into_owned())
}

/// The literal directory of a glob pattern: its components before the first that holds a wildcard.
pub fn glob_root(pattern: &str) -> std::path::PathBuf {
    let mut root = std::path::PathBuf::new();
    for c in Path::new(pattern).components() {
        if c.as_os_str().to_string_lossy().contains(['*', '?', '[']) {
            break;
        }
        root.push(c);
    }
    root
}

/// The key of a file found under an input root (a walked folder or a glob's literal directory), falling back to
/// its file name when it is not below the root.
pub fn key_below(path: &Path, root: &Path) -> String {
    relative_key(path, root).unwrap_or_else(|| name_key(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_reference_vectors() {
        // The published FNV-1a 64 test vectors (Fowler/Noll/Vo).
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn k_of_n_is_validated() {
        assert_eq!("2/8".parse(), Ok(Shard { index: 2, count: 8 }));
        assert_eq!(" 1 / 1 ".parse(), Ok(Shard { index: 1, count: 1 }));
        for bad in ["0/2", "3/2", "1/0", "1", "a/b", "-1/2", "1/2/3", ""] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(e.contains("1 <= K <= N"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_key_drops_the_machines_prefix() {
        let a = key_below(
            Path::new("/mnt/logs/node-17/ollama.log"),
            Path::new("/mnt/logs"),
        );
        let b = key_below(
            Path::new("data/fleet/node-17/ollama.log"),
            Path::new("data/fleet"),
        );
        assert_eq!(a, "node-17/ollama.log");
        assert_eq!(a, b);
        assert_eq!(name_key(Path::new("/var/log/ollama.log")), "ollama.log");
        assert_eq!(glob_root("/mnt/logs/*/ollama.log"), Path::new("/mnt/logs"));
        assert_eq!(glob_root("*.log"), Path::new(""));
        assert_eq!(key_below(Path::new("a.log"), &glob_root("*.log")), "a.log");
    }

    #[test]
    fn every_key_is_in_exactly_one_shard() {
        for n in 1..6u32 {
            for key in ["a.log", "node-1/ollama.log", "", "ü/ñ.log.gz"] {
                let owners = (1..=n)
                    .filter(|k| {
                        Shard {
                            index: *k,
                            count: n,
                        }
                        .takes(key)
                    })
                    .count();
                assert_eq!(owners, 1, "{key} of {n}");
            }
        }
    }
}
