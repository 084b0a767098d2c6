//! Gmsh `.msh` version 4 (ASCII) input: nodes, 3-node triangles (element type 2; other
//! elements such as boundary lines are skipped), and the metric from a `$NodeData` view
//! named `Metric` with 9 (a 3x3 tensor, of which the xy block is used), 4 (2x2) or 3
//! (`M11, M12, M22`) components per node. Errors name the file and line.

use crate::{Mesh, MeshError, Metric};
use std::collections::HashMap;
use std::path::Path;

/// Gmsh's element type of a 3-node triangle.
const TRIANGLE: usize = 2;

/// Lines with their numbers, blank ones skipped.
struct Lines<'a> {
    path: &'a Path,
    it: std::iter::Peekable<Box<dyn Iterator<Item = (usize, &'a str)> + 'a>>,
}

impl<'a> Lines<'a> {
    fn error(&self, line: usize, message: impl std::fmt::Display) -> MeshError {
        MeshError::Input {
            file: self.path.display().to_string(),
            message: format!("line {line}: {message}"),
        }
    }

    fn next(&mut self, what: &str) -> Result<(usize, &'a str), MeshError> {
        self.it.next().ok_or_else(|| MeshError::Input {
            file: self.path.display().to_string(),
            message: format!("the file ends early, in {what}"),
        })
    }

    /// The next line's whitespace-separated numbers.
    fn numbers(&mut self, what: &str) -> Result<(usize, Vec<f64>), MeshError> {
        let (n, l) = self.next(what)?;
        let v = l
            .split_whitespace()
            .map(|t| {
                t.parse::<f64>()
                    .map_err(|_| self.error(n, format!("`{t}` is not a number ({what})")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok((n, v))
    }

    /// The next line's numbers, at least `count` of them.
    fn at_least(&mut self, count: usize, what: &str) -> Result<(usize, Vec<f64>), MeshError> {
        let (n, v) = self.numbers(what)?;
        if v.len() < count {
            return Err(self.error(
                n,
                format!("{what}: expected {count} numbers, found {}", v.len()),
            ));
        }
        Ok((n, v))
    }
}

/// Reads a mesh with its metric from a Gmsh 4 ASCII file.
pub fn read_mesh(path: &Path) -> Result<Mesh, MeshError> {
    let text = std::fs::read_to_string(path).map_err(|e| MeshError::Input {
        file: path.display().to_string(),
        message: format!("cannot read it: {e}"),
    })?;
    parse(path, &text)
}

/// Parses the text of a Gmsh 4 ASCII file (`path` names it in errors).
pub fn parse(path: &Path, text: &str) -> Result<Mesh, MeshError> {
    let it: Box<dyn Iterator<Item = (usize, &str)>> = Box::new(
        text.lines()
            .enumerate()
            .map(|(k, l)| (k + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty()),
    );
    let mut lines = Lines {
        path,
        it: it.peekable(),
    };
    let mut node_index: HashMap<usize, usize> = HashMap::new();
    let mut points: Vec<[f64; 2]> = vec![];
    let mut triangles: Vec<[usize; 3]> = vec![];
    let mut metric: Option<Vec<Option<Metric>>> = None;
    let mut version_seen = false;
    while let Some((n, l)) = lines.it.next() {
        match l {
            "$MeshFormat" => {
                let (n, v) = lines.at_least(3, "$MeshFormat")?;
                if !(4.0..5.0).contains(&v[0]) || v[1] != 0.0 {
                    return Err(lines.error(n, format!("format {} (file type {}): only version 4 ASCII is read; re-save with Gmsh 4 in ASCII", v[0], v[1])));
                }
                version_seen = true;
            }
            "$Nodes" => {
                let (_, head) = lines.at_least(2, "$Nodes")?;
                for _ in 0..head[0] as usize {
                    let (_, block) = lines.at_least(4, "a node block")?;
                    let count = block[3] as usize;
                    let mut tags = Vec::with_capacity(count);
                    for _ in 0..count {
                        let (n, t) = lines.at_least(1, "node tags")?;
                        tags.push((n, t[0] as usize));
                    }
                    for (_, tag) in tags {
                        let (_, xyz) = lines.at_least(3, "node coordinates")?;
                        node_index.insert(tag, points.len());
                        points.push([xyz[0], xyz[1]]);
                    }
                }
            }
            "$Elements" => {
                let (_, head) = lines.at_least(2, "$Elements")?;
                for _ in 0..head[0] as usize {
                    let (_, block) = lines.at_least(4, "an element block")?;
                    let (kind, count) = (block[2] as usize, block[3] as usize);
                    for _ in 0..count {
                        let (n, e) = lines.numbers("an element")?;
                        if kind != TRIANGLE {
                            continue;
                        }
                        if e.len() < 4 {
                            return Err(lines.error(n, "a triangle needs its tag and 3 node tags"));
                        }
                        let mut t = [0; 3];
                        for (k, x) in e[1..4].iter().enumerate() {
                            t[k] = *node_index.get(&(*x as usize)).ok_or_else(|| {
                                lines.error(n, format!("node {x} is not defined"))
                            })?;
                        }
                        triangles.push(t);
                    }
                }
            }
            "$NodeData" => {
                let (_, s) = lines.at_least(1, "$NodeData string tags")?;
                let mut name = String::new();
                for k in 0..s[0] as usize {
                    let (_, l) = lines.next("$NodeData string tags")?;
                    if k == 0 {
                        name = l.trim_matches('"').to_string();
                    }
                }
                let (_, r) = lines.at_least(1, "$NodeData real tags")?;
                for _ in 0..r[0] as usize {
                    lines.next("$NodeData real tags")?;
                }
                let (_, i) = lines.at_least(1, "$NodeData integer tags")?;
                let mut ints = vec![];
                for _ in 0..i[0] as usize {
                    ints.push(lines.at_least(1, "$NodeData integer tags")?.1[0] as usize);
                }
                let (components, entries) = (
                    ints.get(1).copied().unwrap_or(1),
                    ints.get(2).copied().unwrap_or(0),
                );
                let mut values = vec![None; points.len()];
                for _ in 0..entries {
                    let (n, v) = lines.at_least(1 + components, "node data")?;
                    if name != "Metric" {
                        continue;
                    }
                    let at = *node_index
                        .get(&(v[0] as usize))
                        .ok_or_else(|| lines.error(n, format!("node {} is not defined", v[0])))?;
                    let m = match components {
                        9 => Metric {
                            a: v[1],
                            b: 0.5 * (v[2] + v[4]),
                            c: v[5],
                        },
                        4 => Metric {
                            a: v[1],
                            b: 0.5 * (v[2] + v[3]),
                            c: v[4],
                        },
                        3 => Metric {
                            a: v[1],
                            b: v[2],
                            c: v[3],
                        },
                        k => {
                            return Err(lines.error(
                                n,
                                format!("`Metric` has {k} components: 9, 4 or 3 expected"),
                            ))
                        }
                    };
                    values[at] = Some(m);
                }
                if name == "Metric" {
                    metric = Some(values);
                }
            }
            _ if l.starts_with('$') => {}
            other if !l.starts_with('$') && !version_seen => {
                return Err(
                    lines.error(n, format!("`{other}` before $MeshFormat: not a Gmsh file"))
                );
            }
            _ => {}
        }
    }
    if !version_seen {
        return Err(MeshError::Input {
            file: path.display().to_string(),
            message: "no $MeshFormat section: not a Gmsh file".into(),
        });
    }
    let metric = metric.ok_or_else(|| MeshError::Input {
        file: path.display().to_string(),
        message: "no $NodeData view named `Metric`: the metric tensor per vertex is needed".into(),
    })?;
    let metric = metric
        .into_iter()
        .enumerate()
        .map(|(v, m)| {
            m.ok_or_else(|| {
                MeshError::Invalid(format!("vertex {v} has no metric in the `Metric` view"))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Mesh::new(points, triangles, metric)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SQUARE: &str = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 5 1 5\n2 1 0 5\n1\n2\n3\n4\n5\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n0.5 0.5 0\n$EndNodes\n$Elements\n2 5 1 5\n1 1 1 1\n1 1 2\n2 1 2 4\n2 1 2 5\n3 2 3 5\n4 3 4 5\n5 4 1 5\n$EndElements\n$NodeData\n1\n\"Metric\"\n1\n0\n3\n0\n3\n5\n1 1 0 1\n2 1 0 1\n3 1 0 1\n4 1 0 1\n5 2 0.5 3\n$EndNodeData\n";

    fn parse_str(s: &str) -> Result<Mesh, MeshError> {
        parse(Path::new("t.msh"), s)
    }

    #[test]
    fn a_gmsh_square_reads_with_its_metric() {
        let m = parse_str(SQUARE).unwrap();
        assert_eq!((m.points.len(), m.triangles.len()), (5, 4));
        assert_eq!(
            m.metric[4],
            Metric {
                a: 2.0,
                b: 0.5,
                c: 3.0
            }
        );
        assert_eq!(m.neighbours_of(4), &[0, 1, 2, 3]);
    }

    #[test]
    fn bad_gmsh_files_name_the_problem() {
        let cut = &SQUARE[..SQUARE.find("0.5 0.5 0").unwrap()];
        let e = parse_str(cut).unwrap_err().to_string();
        assert!(e.contains("t.msh") && e.contains("ends early"), "{e}");
        let e = parse_str(&SQUARE.replace("\"Metric\"", "\"Size\""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("Metric"), "{e}");
        let e = parse_str(&SQUARE.replace("4 3 4 5", "4 3 4 9"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 25") && e.contains("node 9"), "{e}");
        let e = parse_str(&SQUARE.replace("4.1 0 8", "2.2 0 8"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("version 4"), "{e}");
    }
}
