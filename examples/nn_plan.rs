//! The encrypted circuit of an ONNX model for a bootstrapping preset, without keys: steps,
//! bootstraps, levels, Galois keys and diagonals per linear step. `cargo run --release
//! --example nn_plan -- models/resnet20-relu.onnx n16`
use xehe::apps::fashion_mnist;
use xehe::apps::nn::compile::{sign_polynomials, Budget, Plan, Step};
use xehe::apps::nn::{onnx, plain::Calibration, DEFAULT_MARGIN};
use xehe::circuits::bootstrapping::BootstrappingParameters;

fn main() -> xehe::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let graph = onnx::load(std::path::Path::new(&args[1]))?;
    let params = BootstrappingParameters::preset(args.get(2).map_or("n16", String::as_str)).expect("preset");
    let ctx = params.context()?;
    let side = graph.input.height;
    let (calib, _) = fashion_mnist::padded_images(&fashion_mnist::locate(None)?, true, 64, side)?;
    let t = std::time::Instant::now();
    let calibration = Calibration::new(&graph, calib.iter().map(Vec::as_slice))?;
    let budget = Budget {
        slots: params.poly_modulus_degree() / 2,
        input_level: params.output_level(),
        bootstrap_level: params.output_level(),
        margin: DEFAULT_MARGIN,
        sign: sign_polynomials()?,
    };
    let plan = Plan::compile(&graph, &calibration, &budget)?;
    println!("compiled in {:.1} s", t.elapsed().as_secs_f64());
    for s in &plan.steps {
        let what = match &s.step {
            Step::Linear { terms, .. } => format!("linear, {} diagonals", terms.iter().map(|t| t.1.lin.offsets().len()).collect::<Vec<_>>().iter().map(|n| n.to_string()).collect::<Vec<_>>().join("+")),
            Step::Product { .. } => "product".into(),
            Step::Quadratic { beta, .. } => format!("x² + {beta:.3}·x"),
            Step::Poly { index, .. } => format!("sign stage {index}"),
            Step::Activation { index, .. } => format!("activation, degree {}", plan.activations[*index].poly.degree()),
            Step::Bootstrap { .. } => "bootstrap".into(),
        };
        println!("r{:<3} level {:>2}  {what:<30} {}", s.out, s.level, s.node);
    }
    // Encoded as LinearTransform::new_extended does: (ℓ + 1 + α) words of N per diagonal.
    let (mut diagonals, mut bytes) = (0usize, 0f64);
    for s in &plan.steps {
        if let Step::Linear { terms, .. } = &s.step {
            let d: usize = terms.iter().map(|t| t.1.lin.offsets().len()).sum();
            diagonals += d;
            bytes += (d * (s.level + 2 + params.special_modulus_size) * params.poly_modulus_degree() * 8) as f64;
        }
    }
    println!(
        "{} steps, {} bootstraps, {} Galois elements, {diagonals} diagonals ({:.1} GiB encoded)",
        plan.steps.len(),
        plan.bootstraps(),
        plan.galois_elements(ctx.galois_tool())?.len(),
        bytes / (1u64 << 30) as f64
    );
    Ok(())
}
