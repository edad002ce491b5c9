//! The encrypted run of a recurrent model.
