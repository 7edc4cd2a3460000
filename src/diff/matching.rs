//! Pair the loads of two runs. Loads are matched on their [`MatchKey`] (model, context, parallel, GPU set);
//! when a key occurs several times in a run, the n-th load with that key in the old run is paired with the
//! n-th in the new run (order of appearance: file order, then line order). Loads left over are reported as
//! only in one run.

use super::facts::{LoadFacts, MatchKey};

/// Indices into the old and the new run: both for a matched pair, one for a load only one run has.
pub type Pair = (Option<usize>, Option<usize>);

/// Pairs in the new run's order, then the old run's unmatched loads in its order.
pub fn pair(old: &[LoadFacts], new: &[LoadFacts]) -> Vec<Pair> {
    let mut taken = vec![false; old.len()];
    let mut pairs = Vec::new();
    for (j, n) in new.iter().enumerate() {
        let found = next_free(old, &taken, &n.key);
        if let Some(i) = found {
            taken[i] = true;
        }
        pairs.push((found, Some(j)));
    }
    pairs.extend(
        taken
            .iter()
            .enumerate()
            .filter(|(_, t)| !**t)
            .map(|(i, _)| (Some(i), None)),
    );
    pairs
}

/// The first old load with this key not paired yet.
fn next_free(old: &[LoadFacts], taken: &[bool], key: &MatchKey) -> Option<usize> {
    old.iter()
        .enumerate()
        .find(|(i, o)| !taken[*i] && &o.key == key)
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::facts::Placement;

    fn load(model: &str, ctx: i64, line: u64) -> LoadFacts {
        LoadFacts {
            path: "x.log".into(),
            first_line: line,
            key: MatchKey {
                model: model.into(),
                ctx: Some(ctx),
                parallel: Some(1),
                gpus: vec!["Tesla K80".into()],
            },
            components: Vec::new(),
            devices: Vec::new(),
            placement: Placement::default(),
            findings: Vec::new(),
        }
    }

    #[test]
    fn repeated_keys_pair_in_order_of_appearance_and_leftovers_stay_alone() {
        let old = [
            load("gemma3", 4096, 1),
            load("gemma3", 4096, 50),
            load("qwen2", 8192, 90),
        ];
        let new = [
            load("gemma3", 4096, 3),
            load("llama", 2048, 40),
            load("gemma3", 4096, 70),
        ];
        assert_eq!(
            pair(&old, &new),
            vec![
                (Some(0), Some(0)),
                (None, Some(1)),
                (Some(1), Some(2)),
                (Some(2), None)
            ]
        );
    }

    #[test]
    fn a_different_context_is_a_different_load() {
        let old = [load("gemma3", 4096, 1)];
        let new = [load("gemma3", 8192, 1)];
        assert_eq!(pair(&old, &new), vec![(None, Some(0)), (Some(0), None)]);
    }
}
