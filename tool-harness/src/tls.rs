//! The TLS setup of every HTTP client in the harness (model APIs, MCP over HTTP): rustls
//! with the `ring` provider, given to reqwest explicitly, so no process-wide default
//! provider is needed (reqwest's `rustls-no-provider` build panics without one).

use std::sync::Arc;

/// A TLS setup over rustls with the `ring` provider and the platform's verifier (the
/// system's root certificates). A client of a plain `http://` API still needs one (reqwest
/// builds its connector eagerly); where the system has no certificates it gets an empty
/// root store, so that every `https://` connection fails rather than the client.
pub(crate) fn client_config(https: bool) -> Result<rustls::ClientConfig, String> {
    use rustls_platform_verifier::BuilderVerifierExt;

    // rustls 0.23.48 deprecates the ring provider (no post-quantum key exchange); the one
    // that has it, aws-lc-rs, is a C build, which the harness keeps out of a user's build.
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = || {
        rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|err| format!("cannot set up TLS: {err}"))
    };
    let mut config = match builder()?.with_platform_verifier() {
        Ok(verified) => verified.with_no_client_auth(),
        Err(err) if https => {
            return Err(format!(
                "cannot set up TLS certificate verification from the system's root certificates: {err}"
            ));
        }
        Err(_) => builder()?
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}
