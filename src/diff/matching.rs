//! Pair the loads of two runs, in two passes.
//!
//! 1. On the full [`MatchKey`](super::MatchKey) (model, context, parallel, GPU set). When a key occurs several
//!    times in a run, each new load takes the first old load of its key not paired yet that has the same model
//!    blob (when both logs print one), else the first of its key not paired yet: order of appearance (file
//!    order, then line order), the n-th with the n-th.
//! 2. What is left, on model and GPU set alone, again in order of appearance: the same model on the same GPUs
//!    whose context or parallel slots changed between the runs (a release that picks another default context,
//!    ollama#14073) is compared, with the settings change named, rather than listed as two unrelated loads.
//!
//! Loads left after both passes are reported as only in one run.

use super::facts::LoadFacts;

/// How a pair was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pairing {
    /// Same model, context, parallel and GPU set.
    Key,
    /// Same model and GPU set; context or parallel changed.
    Settings,
}

/// Indices into the old and the new run: both for a matched pair (with how it was found), one for a load only
/// one run has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pair {
    Both(usize, usize, Pairing),
    OldOnly(usize),
    NewOnly(usize),
}

/// Pairs in the new run's order, then the old run's unmatched loads in its order.
pub fn pair(old: &[LoadFacts], new: &[LoadFacts]) -> Vec<Pair> {
    let mut taken = vec![false; old.len()];
    let mut partner: Vec<Option<(usize, Pairing)>> = vec![None; new.len()];
    for (j, n) in new.iter().enumerate() {
        let free = |i: &usize| !taken[*i] && old[*i].key == n.key;
        let same_blob = (0..old.len())
            .filter(free)
            .find(|i| n.blob.is_some() && old[*i].blob == n.blob);
        if let Some(i) = same_blob.or_else(|| (0..old.len()).find(free)) {
            taken[i] = true;
            partner[j] = Some((i, Pairing::Key));
        }
    }
    for (j, n) in new.iter().enumerate() {
        if partner[j].is_some() {
            continue;
        }
        if let Some(i) =
            (0..old.len()).find(|i| !taken[*i] && old[*i].key.same_model_and_gpus(&n.key))
        {
            taken[i] = true;
            partner[j] = Some((i, Pairing::Settings));
        }
    }
    let mut pairs: Vec<Pair> = partner
        .iter()
        .enumerate()
        .map(|(j, p)| match p {
            Some((i, how)) => Pair::Both(*i, j, *how),
            None => Pair::NewOnly(j),
        })
        .collect();
    pairs.extend((0..old.len()).filter(|i| !taken[*i]).map(Pair::OldOnly));
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::facts::{MatchKey, Placement};

    fn load(model: &str, ctx: i64, blob: Option<&str>) -> LoadFacts {
        LoadFacts {
            path: "x.log".into(),
            first_line: 1,
            key: MatchKey::new(model.into(), Some(ctx), Some(1), vec!["Tesla K80".into()]),
            blob: blob.map(str::to_string),
            components: Vec::new(),
            devices: Vec::new(),
            serving: Vec::new(),
            kv_fill: None,
            placement: Placement::default(),
            findings: Vec::new(),
        }
    }

    #[test]
    fn repeated_keys_pair_in_order_of_appearance_and_leftovers_stay_alone() {
        let old = [
            load("gemma3", 4096, None),
            load("gemma3", 4096, None),
            load("qwen2", 8192, None),
        ];
        let new = [
            load("gemma3", 4096, None),
            load("llama", 2048, None),
            load("gemma3", 4096, None),
        ];
        assert_eq!(
            pair(&old, &new),
            vec![
                Pair::Both(0, 0, Pairing::Key),
                Pair::NewOnly(1),
                Pair::Both(1, 2, Pairing::Key),
                Pair::OldOnly(2)
            ]
        );
    }

    #[test]
    fn the_same_blob_is_preferred_among_loads_of_one_key() {
        // gemma3:4b and gemma3:12b are both `gemma3`: their blobs keep them apart.
        let old = [
            load("gemma3", 4096, Some("sha256-4b")),
            load("gemma3", 4096, Some("sha256-12b")),
        ];
        let new = [
            load("gemma3", 4096, Some("sha256-12b")),
            load("gemma3", 4096, Some("sha256-4b")),
        ];
        assert_eq!(
            pair(&old, &new),
            vec![
                Pair::Both(1, 0, Pairing::Key),
                Pair::Both(0, 1, Pairing::Key)
            ]
        );
    }

    #[test]
    fn a_changed_context_pairs_on_model_and_gpus_after_the_exact_keys() {
        let old = [load("gemma3", 4096, None), load("gemma3", 8192, None)];
        let new = [load("gemma3", 32768, None), load("gemma3", 8192, None)];
        assert_eq!(
            pair(&old, &new),
            vec![
                Pair::Both(0, 0, Pairing::Settings),
                Pair::Both(1, 1, Pairing::Key)
            ]
        );
        let other_model = [load("qwen2", 4096, None)];
        assert_eq!(
            pair(&old[..1], &other_model),
            vec![Pair::NewOnly(0), Pair::OldOnly(0)]
        );
    }
}
