//! TLS for the PostgreSQL store: what the URL's `sslmode` and `sslrootcert` ask for.
//!
//! - no `sslmode`, `sslmode=prefer` or `sslmode=disable`: no TLS, as before (the store offers
//!   none, so `prefer` connects in plain text).
//! - `sslmode=require`: TLS with rustls; the server's certificate is **not** checked (as libpq's
//!   `require` without a root certificate): the connection is encrypted against eavesdroppers,
//!   not against a man in the middle.
//! - `sslmode=verify-full&sslrootcert=/path/ca.pem`: TLS; the certificate chain must lead to a
//!   certificate in that PEM file and name the URL's host (its DNS name or IP address).
//!
//! Other modes (`allow`, `verify-ca`) and `sslrootcert` without `verify-full` are refused at
//! open rather than quietly checking less than asked. The `postgres` crate parses
//! `sslmode=disable|prefer|require` but neither `verify-full` nor `sslrootcert`: those two are
//! taken out of a `postgres://` URL here before the rest goes to [`postgres::Config`]
//! (key=value connection strings are passed on as they are). Crypto is rustls' ring provider,
//! as the server's TLS uses.

use std::str::FromStr;
use std::sync::Arc;

use postgres::config::SslMode;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

/// How connections are made: the parsed configuration and the TLS connector, if any.
#[derive(Clone)]
pub(super) struct Target {
    pub(super) config: postgres::Config,
    pub(super) tls: Option<MakeRustlsConnect>,
}

/// Parses a store URL (see the module docs). Errors name the parameter at fault, never the
/// URL (it may hold a password).
pub(super) fn parse(url: &str) -> Result<Target, String> {
    let (rest, verify_full, root) = take_tls_params(url)?;
    let mut config = postgres::Config::from_str(&rest).map_err(|e| format!("store URL: {e}"))?;
    let tls = if verify_full {
        let root = root.ok_or("store URL: sslmode=verify-full needs sslrootcert=/path/ca.pem")?;
        config.ssl_mode(SslMode::Require);
        Some(verifying(&root)?)
    } else if root.is_some() {
        return Err(
            "store URL: sslrootcert is used only with sslmode=verify-full \
                    (sslmode=require does not check the certificate)"
                .into(),
        );
    } else if config.get_ssl_mode() == SslMode::Require {
        Some(encrypting_only()?)
    } else {
        None
    };
    Ok(Target { config, tls })
}

/// Takes `sslmode=verify-full` and `sslrootcert` out of a `postgres://` URL's query: the rest
/// of the URL, whether verify-full was asked for, and the root certificate's path.
fn take_tls_params(url: &str) -> Result<(String, bool, Option<String>), String> {
    let is_url = url.starts_with("postgres://") || url.starts_with("postgresql://");
    let Some((base, query)) = url.split_once('?').filter(|_| is_url) else {
        return Ok((url.to_string(), false, None));
    };
    let (mut verify_full, mut root, mut kept) = (false, None, Vec::new());
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match (key, percent_decode(value)?.as_str()) {
            ("sslmode", "verify-full") => verify_full = true,
            ("sslmode", mode @ ("allow" | "verify-ca")) => {
                return Err(format!(
                    "store URL: sslmode={mode} is not supported \
                     (use disable, prefer, require or verify-full)"
                ));
            }
            ("sslrootcert", path) => root = Some(path.to_string()),
            _ => kept.push(pair),
        }
    }
    let rest = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((rest, verify_full, root))
}

/// Decodes `%XX` escapes (a URL's query value).
fn percent_decode(s: &str) -> Result<String, String> {
    let bad = || "store URL: a malformed %-escape".to_string();
    let mut out = Vec::with_capacity(s.len());
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hex = [bytes.next().ok_or_else(bad)?, bytes.next().ok_or_else(bad)?];
            let hex = std::str::from_utf8(&hex).map_err(|_| bad())?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
        } else {
            out.push(b);
        }
    }
    String::from_utf8(out).map_err(|_| bad())
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// TLS that checks the chain against the certificates in `root` (PEM) and the host name.
fn verifying(root: &str) -> Result<MakeRustlsConnect, String> {
    let unreadable = |e| format!("sslrootcert {root}: {e}");
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(root).map_err(unreadable)? {
        roots
            .add(cert.map_err(unreadable)?)
            .map_err(|e| format!("sslrootcert {root}: {e}"))?;
    }
    if roots.is_empty() {
        return Err(format!("sslrootcert {root}: no certificate in the file"));
    }
    let config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// TLS that accepts any certificate (the handshake's signatures are still checked).
fn encrypting_only() -> Result<MakeRustlsConnect, String> {
    let provider = provider();
    let config = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// `sslmode=require`'s verifier: every certificate is taken.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_full_and_its_root_are_taken_out_of_the_url() {
        let (rest, full, root) = take_tls_params(
            "postgres://a:pw@h:1/db?sslmode=verify-full&sslrootcert=%2Ftmp%2Fca.pem&options=x",
        )
        .unwrap();
        assert_eq!(rest, "postgres://a:pw@h:1/db?options=x");
        assert!(full);
        assert_eq!(root.as_deref(), Some("/tmp/ca.pem"));
        let (rest, full, root) = take_tls_params("postgres://h/db?sslmode=require").unwrap();
        assert_eq!(rest, "postgres://h/db?sslmode=require");
        assert!(!full && root.is_none());
    }

    #[test]
    fn modes_are_chosen_from_the_url_and_unsupported_ones_refused() {
        assert!(parse("postgres://h/db").unwrap().tls.is_none());
        assert!(
            parse("postgres://h/db?sslmode=prefer")
                .unwrap()
                .tls
                .is_none()
        );
        assert!(
            parse("postgres://h/db?sslmode=disable")
                .unwrap()
                .tls
                .is_none()
        );
        assert!(
            parse("postgres://h/db?sslmode=require")
                .unwrap()
                .tls
                .is_some()
        );
        assert!(parse("host=h sslmode=require").unwrap().tls.is_some());
        for (url, says) in [
            ("postgres://a:pw@h/db?sslmode=verify-ca", "verify-ca"),
            (
                "postgres://a:pw@h/db?sslmode=verify-full",
                "needs sslrootcert",
            ),
            (
                "postgres://a:pw@h/db?sslmode=require&sslrootcert=/x",
                "only with",
            ),
            (
                "postgres://a:pw@h/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
                "/nonexistent/ca.pem",
            ),
        ] {
            let Err(e) = parse(url) else {
                panic!("{url} was taken")
            };
            assert!(e.contains(says), "{url}: {e}");
            assert!(!e.contains("pw"), "{url}: {e}");
        }
    }
}
