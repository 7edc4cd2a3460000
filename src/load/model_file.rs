//! The model file behind a load: `--gguf FILE`, or the blob the log names (`--model …/blobs/sha256-…`) when it
//! exists on this machine. Its header gives the exact per-layer layout the replay and `--max-ctx` prefer to the
//! log's hyperparameters. It exists so a report run where Ollama ran gets exact sizes without asking, and so a
//! missing or unreadable file never costs more than a warning.
//!
//! `--gguf URL` is read by the command layer before the run (`crate::fetch`, `crate::gguf::remote`): its
//! layout is `preread`, used for every load like `--gguf FILE`'s.
//!
//! Where a named blob is looked for, first found first: the path in the log itself, `$OLLAMA_MODELS/blobs/`,
//! `~/.ollama/models/blobs/` (`%USERPROFILE%` on Windows). A file found is used only when its block count
//! agrees with the log's.

use std::path::{Path, PathBuf};

use crate::model::{Load, ModelLayout};

/// Where to find model files, decided once per run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelFiles {
    /// `--gguf FILE`: used for every load.
    pub explicit: Option<PathBuf>,
    /// Look for the blob each load names (off for library callers unless asked: no surprise file access).
    pub search: bool,
    /// `$OLLAMA_MODELS`.
    pub ollama_models: Option<PathBuf>,
    /// The home folder (`$HOME`, else `%USERPROFILE%`).
    pub home: Option<PathBuf>,
    /// `--gguf URL`: the address and how to fetch it, read by the command layer before the run into `preread`.
    pub remote: Option<(String, crate::fetch::FetchOptions)>,
    /// A layout read before the run (`--gguf URL`), used for every load, with the name it is shown by.
    pub preread: Option<(String, ModelLayout)>,
}

impl ModelFiles {
    /// `--gguf` and the search, with the folders from the environment.
    pub fn from_environment(explicit: Option<PathBuf>, search: bool) -> ModelFiles {
        ModelFiles {
            explicit,
            search,
            ollama_models: std::env::var_os("OLLAMA_MODELS")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            home: std::env::var_os("HOME")
                .or_else(|| std::env::var_os("USERPROFILE"))
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            remote: None,
            preread: None,
        }
    }

    /// `--gguf URL` (no search: the URL names the model), fetched with `fetch`.
    pub fn remote(address: String, fetch: crate::fetch::FetchOptions) -> ModelFiles {
        ModelFiles {
            remote: Some((address, fetch)),
            ..ModelFiles::default()
        }
    }

    /// The files to try for `load`, in order, each with how it was found.
    pub fn candidates(&self, load: &Load) -> Vec<(PathBuf, &'static str)> {
        if let Some(p) = &self.explicit {
            return vec![(p.clone(), "--gguf")];
        }
        if !self.search {
            return Vec::new();
        }
        let mut out = Vec::new();
        if let Some(p) = &load.model.path {
            out.push((PathBuf::from(p), "the path in the log"));
        }
        if let Some(blob) = &load.model.blob {
            if let Some(dir) = &self.ollama_models {
                out.push((dir.join("blobs").join(blob), "$OLLAMA_MODELS"));
            }
            if let Some(home) = &self.home {
                let path = home.join(".ollama").join("models").join("blobs").join(blob);
                out.push((path, "~/.ollama/models"));
            }
        }
        out
    }
}

/// The block count the log gives for the load, to check a file against.
fn logged_blocks(load: &Load) -> Option<i64> {
    load.model
        .block_count
        .or_else(|| load.actual.total_layers.map(|t| t - 1))
        .or_else(|| {
            load.estimate
                .as_ref()
                .and_then(|e| e.layers.model)
                .map(|m| m - 1)
        })
}

/// Find and read the model file for `load` with `read` (the GGUF reader); on success the load's layout is the
/// file's, `model.gguf` names it and a note says so. Returns a warning when a file was named or found but
/// could not be used; nothing when none was found.
pub fn attach(
    load: &mut Load,
    files: &ModelFiles,
    mut read: impl FnMut(&Path) -> Result<ModelLayout, String>,
) -> Option<String> {
    if let Some((shown, layout)) = &files.preread {
        return use_layout(load, shown, "--gguf", layout.clone());
    }
    if let Some((address, _)) = &files.remote {
        return Some(format!(
            "model file {address} (--gguf): its header was not fetched; using the log's figures"
        ));
    }
    let candidates = files.candidates(load);
    let explicit = files.explicit.is_some();
    for (path, how) in candidates {
        let shown = path.display().to_string();
        if !path.is_file() {
            if explicit {
                return Some(format!(
                    "model file {shown} ({how}): no such file; using the log's figures"
                ));
            }
            continue;
        }
        let layout = match read(&path) {
            Ok(l) => l,
            Err(e) => {
                return Some(format!(
                    "model file {shown} ({how}) could not be read: {e}; using the log's figures"
                ))
            }
        };
        return use_layout(load, &shown, how, layout);
    }
    None
}

/// The file's layout on `load` when its block count agrees with the log's; else the warning.
fn use_layout(load: &mut Load, shown: &str, how: &str, layout: ModelLayout) -> Option<String> {
    if let Some(blocks) = logged_blocks(load) {
        if layout.block_count() as i64 != blocks {
            return Some(format!(
                "model file {shown} ({how}) has {} blocks but the log's model has {blocks}: not used",
                layout.block_count()
            ));
        }
    }
    load.notes.push(format!(
        "model file: {shown} ({how}), its GGUF header gives the per-layer sizes"
    ));
    load.model.gguf = Some(shown.to_string());
    load.model.layout = Some(layout);
    None
}

/// The last model file read and what reading it gave, so that the loads of one model (every load of a log, every
/// log a batch worker reads with `--gguf`) read its header once. Keyed by path, length and modification time:
/// a file replaced in between is read again.
#[derive(Debug, Clone, Default)]
pub struct LastRead {
    last: Option<(FileKey, Result<ModelLayout, String>)>,
}

type FileKey = (PathBuf, Option<(u64, Option<std::time::SystemTime>)>);

impl LastRead {
    /// `read(path)`, or what it gave last time for the same unchanged file.
    pub fn read(
        &mut self,
        path: &Path,
        read: impl FnOnce(&Path) -> Result<ModelLayout, String>,
    ) -> Result<ModelLayout, String> {
        let stamp = std::fs::metadata(path)
            .ok()
            .map(|m| (m.len(), m.modified().ok()));
        let key = (path.to_path_buf(), stamp);
        match &self.last {
            Some((k, result)) if *k == key => result.clone(),
            _ => {
                let result = read(path);
                self.last = Some((key, result.clone()));
                result
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{LayerAttention, LayerLayout, LayoutSource};

    fn layout(path: &Path, blocks: u32) -> ModelLayout {
        ModelLayout {
            source: LayoutSource::Gguf {
                path: path.display().to_string(),
            },
            architecture: "llama".into(),
            trained_context: Some(131_072),
            layers: (0..blocks)
                .map(|index| LayerLayout {
                    index,
                    dense_bytes: Some(200 << 20),
                    expert_bytes: Some(0),
                    attention: LayerAttention::Full {
                        k_elements: 1024,
                        v_elements: 1024,
                    },
                })
                .collect(),
            nonrepeating_bytes: Some(1 << 30),
            output_bytes: Some(500 << 20),
            projector_bytes: None,
        }
    }

    const BLOB: &str = "sha256-8eeb52dfb3bb9aefdf9d1ef24b3bdbcfbe82238798c4b918278320b6fcef18fe";

    fn load(blocks: i64) -> Load {
        let mut l = Load::default();
        l.model.path = Some(format!("/root/.ollama/models/blobs/{BLOB}"));
        l.model.blob = Some(BLOB.to_string());
        l.model.block_count = Some(blocks);
        l
    }

    fn folder(tag: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("vramdiff-model-file-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("blobs")).unwrap();
        std::fs::write(dir.join("blobs").join(BLOB), b"GGUF").unwrap();
        dir
    }

    #[test]
    fn the_blob_the_log_names_is_found_under_ollama_models() {
        let dir = folder("found");
        let files = ModelFiles {
            search: true,
            ollama_models: Some(dir.clone()),
            ..ModelFiles::default()
        };
        let mut l = load(32);
        let warning = attach(&mut l, &files, |p| Ok(layout(p, 32)));
        assert_eq!(warning, None);
        let used = dir.join("blobs").join(BLOB).display().to_string();
        assert_eq!(l.model.gguf.as_deref(), Some(used.as_str()));
        assert_eq!(l.model.layout.as_ref().unwrap().block_count(), 32);
        assert!(l.notes[0].contains("$OLLAMA_MODELS"), "{:?}", l.notes);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn nothing_found_is_silent_and_an_unreadable_file_is_a_warning() {
        let files = ModelFiles {
            search: true,
            ollama_models: Some(PathBuf::from("/nonexistent/vramdiff")),
            ..ModelFiles::default()
        };
        let mut l = load(32);
        assert_eq!(attach(&mut l, &files, |p| Ok(layout(p, 32))), None);
        assert!(l.model.layout.is_none() && l.notes.is_empty());

        let dir = folder("unreadable");
        let files = ModelFiles {
            search: true,
            home: None,
            ollama_models: Some(dir.clone()),
            ..ModelFiles::default()
        };
        let w = attach(&mut l, &files, |_| Err("GGUF reader not merged yet".into())).unwrap();
        assert!(
            w.contains("could not be read: GGUF reader not merged yet"),
            "{w}"
        );
        assert!(l.model.gguf.is_none());
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_file_of_another_model_is_not_used() {
        let dir = folder("other");
        let files = ModelFiles {
            explicit: Some(dir.join("blobs").join(BLOB)),
            ..ModelFiles::default()
        };
        let mut l = load(32);
        let w = attach(&mut l, &files, |p| Ok(layout(p, 48))).unwrap();
        assert!(w.contains("48 blocks") && w.contains("has 32"), "{w}");
        assert!(l.model.layout.is_none());
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_missing_gguf_is_named() {
        let files = ModelFiles {
            explicit: Some(PathBuf::from("/nonexistent/model.gguf")),
            ..ModelFiles::default()
        };
        let mut l = load(32);
        let w = attach(&mut l, &files, |p| Ok(layout(p, 32))).unwrap();
        assert!(
            w.contains("/nonexistent/model.gguf (--gguf): no such file"),
            "{w}"
        );
        assert!(l.model.layout.is_none());
    }

    #[test]
    fn no_search_no_file_access() {
        let files = ModelFiles::default();
        assert!(files.candidates(&load(32)).is_empty());
    }

    #[test]
    fn a_file_is_read_once_until_it_changes() {
        let dir = std::env::temp_dir().join(format!("vramdiff-lastread-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("model.gguf");
        std::fs::write(&path, b"first").unwrap();
        let mut last = LastRead::default();
        let reads = std::cell::Cell::new(0);
        let read = |p: &Path| {
            reads.set(reads.get() + 1);
            Ok(layout(p, 4))
        };
        let first = last.read(&path, read);
        assert_eq!(last.read(&path, read), first);
        assert_eq!(reads.get(), 1, "the same file is read once");
        std::fs::write(&path, b"replaced, longer").unwrap();
        let _ = last.read(&path, read);
        assert_eq!(reads.get(), 2, "a replaced file is read again");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
