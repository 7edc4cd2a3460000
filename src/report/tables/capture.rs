//! One nvidia-smi (or rocm-smi) capture as a table: its GPUs and, with a process table, their processes.

use super::cells::smi;
use crate::report::table::{Align, Table};

/// One capture's GPUs and, when it has a process table, their processes.
pub fn capture(s: &crate::model::Snapshot) -> Table {
    let mut table = Table::new(&[
        ("GPU", Align::Left),
        ("name", Align::Left),
        ("bus / uuid", Align::Left),
        ("used", Align::Right),
        ("total", Align::Right),
        ("processes", Align::Left),
    ]);
    for g in &s.gpus {
        let key = if g.mig {
            format!(
                "{} MIG {}",
                g.index.map(|i| i.to_string()).unwrap_or_default(),
                g.mig_device.map(|i| i.to_string()).unwrap_or_default()
            )
        } else {
            g.index.map(|i| i.to_string()).unwrap_or_else(|| "–".into())
        };
        let processes = match &s.processes {
            None => "no table".to_string(),
            Some(list) => {
                let on: Vec<String> = list
                    .iter()
                    .filter(|p| p.runs_on(g))
                    .map(|p| format!("{} {}", p.name, smi(p.used)))
                    .collect();
                if on.is_empty() {
                    "none".to_string()
                } else {
                    on.join(", ")
                }
            }
        };
        table.push(vec![
            key,
            g.name.clone().unwrap_or_else(|| "–".into()),
            g.bus_id
                .clone()
                .or_else(|| g.uuid.clone())
                .unwrap_or_else(|| "–".into()),
            smi(g.used),
            smi(g.total),
            processes,
        ]);
    }
    if s.gpus.is_empty() {
        for p in s.processes.iter().flatten() {
            table.push(vec![
                p.gpu_index
                    .map(|i| i.to_string())
                    .unwrap_or_else(|| "–".into()),
                String::new(),
                p.gpu_bus_id
                    .clone()
                    .or_else(|| p.gpu_uuid.clone())
                    .unwrap_or_else(|| "–".into()),
                String::new(),
                String::new(),
                format!("{} {}", p.name, smi(p.used)),
            ]);
        }
    }
    table
}
