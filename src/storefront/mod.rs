//! The storefront proxy: requests that reach us through the platform's app proxy, signed.
//! The widget and event endpoints come with their issues; the signature scheme is here now
//! because the `sign` command uses it.

pub mod signature;
