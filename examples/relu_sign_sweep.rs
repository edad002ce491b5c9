//! How many levels the ReLU's composite sign needs: the plaintext model with each ReLU replaced
//! by `x·step(x/B)` (`B` its input's calibrated bound, `step` a composite of sign stages, as the
//! encrypted circuit evaluates it) on Fashion-MNIST test images, against the exact ReLU model:
//! classes that differ, accuracy, and the bootstraps the plan then needs at `N16-dense`.
//! `cargo run --release --example relu_sign_sweep -- models/resnet20-relu.onnx 500 [w1,w2,w3 g3,g3,f1 …]`
use xehe::apps::fashion_mnist;
use xehe::apps::nn::compile::{sign_stages, Budget, Plan, SignStage, Step};
use xehe::apps::nn::graph::Graph;
use xehe::apps::nn::plain::{evaluate_circuit, linear_maps, Calibration};
use xehe::apps::nn::{onnx, DEFAULT_MARGIN};
use xehe::circuits::bootstrapping::BootstrappingParameters;
use rayon::prelude::*;

fn argmax(v: &[f64]) -> usize {
    (0..v.len()).max_by(|&a, &b| v[a].total_cmp(&v[b])).unwrap_or(0)
}

fn main() -> xehe::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let graph = onnx::load(std::path::Path::new(&args[1]))?;
    let count: usize = args.get(2).map_or(200, |s| s.parse().expect("count"));
    let dir = fashion_mnist::locate(None)?;
    let side = graph.input.height;
    let (calib, _) = fashion_mnist::padded_images(&dir, true, 256, side)?;
    let cal = Calibration::new(&graph, calib.iter().map(Vec::as_slice))?;
    let (test, labels) = fashion_mnist::padded_images(&dir, false, count, side)?;
    let maps = linear_maps(&graph)?;
    let reference: Vec<usize> = test.par_iter().map(|im| argmax(&logits_exact(&graph, &maps, im))).collect();
    let params = BootstrappingParameters::n16_dense();
    println!("{count} test images; exact ReLU accuracy {:.1} %", 100.0 * hits(&reference, &labels) as f64 / count as f64);
    // Stage sets from the arguments (e.g. `g3,g3,f1`), else the production set and cheaper ones.
    let named: Vec<String> = if args.len() > 3 { args[3..].to_vec() } else { ["g3,g3,g3,f3,f3", "w1,w2,w3", "g3,g3,f3", "g3,g3,f1", "g3,f3,f1", "g3,g1,f1", "g3,f3"].map(String::from).to_vec() };
    let parse = |t: &str| match t {
        "f1" => SignStage::F1,
        "f3" => SignStage::F3,
        "g1" => SignStage::G1,
        "g3" => SignStage::G3,
        "w1" => SignStage::W1,
        "w2" => SignStage::W2,
        "w3" => SignStage::W3,
        _ => panic!("unknown stage {t}"),
    };
    let sets: Vec<(String, Vec<SignStage>)> = named.iter().map(|n| (n.clone(), n.split(',').map(parse).collect())).collect();
    for (name, set) in sets {
        let stages = sign_stages(&set)?;
        let classes: Vec<usize> = test.par_iter().map(|im| argmax(&evaluate_circuit(&graph, &maps, &cal, DEFAULT_MARGIN, &stages, &[], im).expect("evaluate")[graph.output])).collect();
        let same = classes.iter().zip(&reference).filter(|(a, b)| a == b).count();
        let budget = Budget {
            slots: params.poly_modulus_degree() / 2,
            input_level: params.output_level(),
            bootstrap_level: params.output_level(),
            margin: DEFAULT_MARGIN,
            sign: stages,
        };
        let plan = Plan::compile(&graph, &cal, &budget)?;
        let boots = plan.steps.iter().filter(|s| matches!(s.step, Step::Bootstrap { .. })).count();
        println!(
            "{name:<16} ({} levels) classes = exact ReLU's {same}/{count}, accuracy {:.1} %, {boots} bootstraps",
            set.iter().map(|st| if st.degree() > 3 { 3 } else { 2 }).sum::<usize>(),
            100.0 * hits(&classes, &labels) as f64 / count as f64
        );
    }
    Ok(())
}

fn logits_exact(graph: &Graph, maps: &[Option<xehe::apps::nn::sparse::AffineMap>], image: &[f64]) -> Vec<f64> {
    xehe::apps::nn::plain::evaluate_with(graph, maps, image).expect("evaluate").swap_remove(graph.output)
}

fn hits(classes: &[usize], labels: &[u8]) -> usize {
    classes.iter().zip(labels).filter(|(c, l)| **c == usize::from(**l)).count()
}
