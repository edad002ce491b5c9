//! Applications on the circuits layer (the top layer: they use the scheme and the circuits,
//! nothing uses them but the `xehe` command): the data sets they read ([`dataset`],
//! [`fashion_mnist`]), the input shapes of precision measurements ([`input_shapes`]), encrypted
//! logistic-regression inference (`xehe demo`, [`demo`]) and training ([`helr`]), and encrypted
//! neural networks ([`nn`]).

pub mod dataset;
pub mod demo;
pub mod fashion_mnist;
pub mod helr;
pub mod input_shapes;
pub mod nn;
