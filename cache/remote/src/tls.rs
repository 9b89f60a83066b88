//! TLS for `grpcs://` and `https://` (rustls with the ring provider): the
//! server's certificate is checked against the system's trusted roots and
//! the private CA named by `--remote-tls-ca`, as Bazel's
//! `--tls_certificate` adds one.

use std::path::Path;

use ureq::tls::{Certificate, PemItem, RootCerts, TlsConfig, TlsProvider};

/// The certificates a TLS remote is checked against.
pub struct Roots {
    /// The system's trusted roots (the platform's store).
    system: Vec<Certificate<'static>>,
    /// The `--remote-tls-ca` file's PEM and its certificates.
    ca: Option<(Vec<u8>, Vec<Certificate<'static>>)>,
}

impl Roots {
    /// The system's roots, and the certificates of the PEM file `ca`. The
    /// error says why they cannot be used (an unreadable file, a file
    /// without a certificate, no roots at all).
    pub fn load(ca: Option<&Path>) -> Result<Roots, String> {
        let system: Vec<Certificate<'static>> = rustls_native_certs::load_native_certs()
            .certs
            .iter()
            .map(|der| Certificate::from_der(der.as_ref()).to_owned())
            .collect();
        let ca = match ca {
            None => None,
            Some(path) => Some(read_ca(path)?),
        };
        if system.is_empty() && ca.is_none() {
            return Err("TLS: the system trusts no root certificates; name the server's CA with --remote-tls-ca".into());
        }
        Ok(Roots { system, ca })
    }

    /// The configuration of the gRPC channel.
    pub fn grpc(&self) -> tonic::transport::ClientTlsConfig {
        let mut config = tonic::transport::ClientTlsConfig::new();
        if !self.system.is_empty() {
            config = config.with_native_roots();
        }
        if let Some((pem, _)) = &self.ca {
            config = config.ca_certificate(tonic::transport::Certificate::from_pem(pem));
        }
        config
    }

    /// The configuration of the HTTP agent.
    pub fn http(&self) -> TlsConfig {
        let extra = self.ca.iter().flat_map(|(_, certs)| certs.iter());
        let roots: Vec<Certificate<'static>> = self.system.iter().chain(extra).cloned().collect();
        TlsConfig::builder()
            .provider(TlsProvider::Rustls)
            .root_certs(RootCerts::new_with_certs(&roots))
            .build()
    }
}

/// The PEM bytes of `path` and the certificates in them.
fn read_ca(path: &Path) -> Result<(Vec<u8>, Vec<Certificate<'static>>), String> {
    let shown = path.display();
    let pem = std::fs::read(path).map_err(|e| format!("--remote-tls-ca {shown}: {e}"))?;
    let certs: Vec<Certificate<'static>> = ureq::tls::parse_pem(&pem)
        .filter_map(|item| match item {
            Ok(PemItem::Certificate(cert)) => Some(cert),
            _ => None,
        })
        .collect();
    if certs.is_empty() {
        return Err(format!(
            "--remote-tls-ca {shown}: no PEM certificate (-----BEGIN CERTIFICATE-----) in it"
        ));
    }
    Ok((pem, certs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_file_without_a_certificate_is_refused_with_the_reason() {
        let dir = std::env::temp_dir().join(format!("krmgraph-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("ca.pem");
        std::fs::write(&file, "not a certificate\n").unwrap();
        let err = Roots::load(Some(&file)).err().unwrap();
        assert!(err.contains("no PEM certificate"), "{err}");
        let err = Roots::load(Some(&dir.join("absent.pem"))).err().unwrap();
        assert!(err.contains("absent.pem"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
