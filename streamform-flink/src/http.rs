//! The one HTTP client the backend uses, for the SQL Gateway and for the JobManager's REST
//! API alike: plain HTTP or HTTPS (the system's trust store, or the certificates of a CA
//! file the target names), an optional `Authorization` header, a timeout per request, no
//! redirects. Every error it returns has its secrets replaced by `***`.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value as Json;

/// Which of Flink's two REST services an endpoint is, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Service {
    /// The SQL Gateway (`flink.gateway`), where statements are submitted.
    Gateway,
    /// The JobManager's REST API (`flink.jobmanager`), where jobs are observed and stopped.
    JobManager,
}

impl fmt::Display for Service {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Service::Gateway => "the SQL Gateway",
            Service::JobManager => "the JobManager's REST API",
        })
    }
}

/// How requests prove who sends them: the credential itself, read from the environment by
/// the caller. It is never printed: `Debug` shows `***`.
#[derive(Clone, PartialEq, Eq)]
pub enum Credential {
    /// `Authorization: Bearer <token>`.
    Bearer(String),
    /// `Authorization: Basic <base64 of user:password>`; the value is `user:password`.
    Basic(String),
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credential::Bearer(_) => f.write_str("Bearer(***)"),
            Credential::Basic(_) => f.write_str("Basic(***)"),
        }
    }
}

/// What a connection needs besides the address.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Connection {
    /// PEM text of the CA certificates to trust instead of the system's trust store.
    pub ca_pem: Option<Vec<u8>>,
    /// The credential sent with every request, if any.
    pub credential: Option<Credential>,
}

/// Why a request to Flink failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlinkError {
    /// Nothing answered at the address (connection refused, unknown host, ...).
    Unreachable {
        /// Which service.
        service: Service,
        /// The base address, e.g. `http://localhost:8083`.
        address: String,
        /// The transport error.
        reason: String,
    },
    /// The TLS handshake failed: most often a certificate no trusted CA signed.
    Tls {
        /// Which service.
        service: Service,
        /// The base address.
        address: String,
        /// What the TLS library said.
        reason: String,
    },
    /// The service answered, but not with what this client expects.
    Unexpected {
        /// Which service.
        service: Service,
        /// The request, e.g. `POST /v2/sessions`.
        request: String,
        /// The HTTP status (0 when the answer was not HTTP at all).
        status: u16,
        /// The start of what it said.
        body: String,
    },
    /// The service refused the credential (HTTP 401 or 403).
    Unauthorized {
        /// Which service.
        service: Service,
        /// The request.
        request: String,
        /// 401 or 403.
        status: u16,
    },
    /// Flink refused the statement; the message lines of its exception chain.
    Rejected {
        /// One line per message line, without stack frames or the gateway's wrappers.
        reason: Vec<String>,
    },
    /// No answer within the time allowed; the outcome is unknown.
    TimedOut {
        /// Which service.
        service: Service,
        /// The request that did not finish.
        request: String,
        /// The time allowed, in seconds.
        seconds: u64,
    },
}

impl fmt::Display for FlinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlinkError::Unreachable {
                service,
                address,
                reason,
            } => write!(f, "cannot reach {service} at {address}: {reason}"),
            FlinkError::Tls {
                service,
                address,
                reason,
            } => write!(
                f,
                "the TLS handshake with {service} at {address} failed: {reason}"
            ),
            FlinkError::Unexpected {
                service,
                request,
                status,
                body,
            } => write!(
                f,
                "{service} answered {request} with HTTP {status} and something other than the expected JSON: {body}"
            ),
            FlinkError::Unauthorized {
                service,
                request,
                status,
            } => write!(
                f,
                "{service} refused the credential for {request} (HTTP {status})"
            ),
            FlinkError::Rejected { reason } => write!(f, "{}", reason.join("\n")),
            FlinkError::TimedOut {
                service,
                request,
                seconds,
            } => write!(f, "{service} did not finish {request} within {seconds}s"),
        }
    }
}

impl std::error::Error for FlinkError {}

/// The result of a call to Flink.
pub type Result<T, E = FlinkError> = std::result::Result<T, E>;

/// The shortest part of a credential that is redacted on its own.
const MIN_REDACTED: usize = 4;

/// How much of an unexpected answer an error quotes.
const QUOTED_CHARS: usize = 300;

/// One of Flink's REST services at one address.
pub struct Endpoint {
    service: Service,
    address: String,
    agent: ureq::Agent,
    authorization: Option<String>,
    /// The strings no error may contain: the credential and its header value.
    secrets: Vec<String>,
    timeout: Duration,
}

/// One answer: the request's name for messages, the status and the body text.
pub struct Answer {
    /// `METHOD /path`, without the query.
    pub request: String,
    /// The HTTP status.
    pub status: u16,
    /// The body.
    pub text: String,
}

impl Endpoint {
    /// An endpoint at `address` (`http://` or `https://`, host and port); `timeout` bounds
    /// each request.
    ///
    /// # Errors
    /// `Unreachable` for an address that is neither http:// nor https://; `Tls` for a CA
    /// file without a certificate.
    pub fn new(
        service: Service,
        address: &str,
        connection: &Connection,
        timeout: Duration,
    ) -> Result<Endpoint> {
        let address = address.trim_end_matches('/').to_string();
        if !address.starts_with("http://") && !address.starts_with("https://") {
            return Err(FlinkError::Unreachable {
                service,
                address,
                reason: "the address must start with http:// or https://".into(),
            });
        }
        let mut tls = ureq::tls::TlsConfig::builder();
        tls = match &connection.ca_pem {
            Some(pem) => {
                let certs: Vec<ureq::tls::Certificate<'static>> = ureq::tls::parse_pem(pem)
                    .filter_map(|item| match item {
                        Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
                        _ => None,
                    })
                    .collect();
                if certs.is_empty() {
                    return Err(FlinkError::Tls {
                        service,
                        address,
                        reason: "the CA file holds no PEM certificate".into(),
                    });
                }
                tls.root_certs(ureq::tls::RootCerts::Specific(Arc::new(certs)))
            }
            None => tls.root_certs(ureq::tls::RootCerts::PlatformVerifier),
        };
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .tls_config(tls.build())
            .build()
            .into();
        let (authorization, secrets) = match &connection.credential {
            None => (None, Vec::new()),
            Some(Credential::Bearer(token)) => {
                let header = format!("Bearer {token}");
                (Some(header.clone()), vec![header, token.clone()])
            }
            Some(Credential::Basic(user_password)) => {
                use base64::Engine;
                let encoded = base64::engine::general_purpose::STANDARD.encode(user_password);
                let header = format!("Basic {encoded}");
                let mut secrets = vec![header.clone(), encoded, user_password.clone()];
                if let Some((_, password)) = user_password.split_once(':') {
                    secrets.push(password.to_string());
                }
                (Some(header), secrets)
            }
        };
        Ok(Endpoint {
            service,
            address,
            agent,
            authorization,
            // A very short part (a one-letter password) would turn every message into
            // asterisks; the whole header value is always redacted.
            secrets: secrets
                .into_iter()
                .enumerate()
                .filter(|(i, s)| *i == 0 || s.chars().count() >= MIN_REDACTED)
                .map(|(_, s)| s)
                .collect(),
            timeout,
        })
    }

    /// The base address.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Which service this is.
    pub fn service(&self) -> Service {
        self.service
    }

    /// The timeout of each request.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// One request with the endpoint's timeout.
    ///
    /// # Errors
    /// Transport failures (`Unreachable`, `Tls`, `TimedOut`, `Unexpected`) and HTTP 401/403
    /// (`Unauthorized`); any other status is the caller's to judge.
    pub fn send(&self, method: &str, path: &str, body: Option<&str>) -> Result<Answer> {
        self.send_with(method, path, body, self.timeout)
    }

    /// One request with its own timeout.
    ///
    /// # Errors
    /// As [`Endpoint::send`].
    pub fn send_with(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
        timeout: Duration,
    ) -> Result<Answer> {
        let url = format!("{}{path}", self.address);
        let request = format!("{method} {}", path.split('?').next().unwrap_or(path));
        let result = match method {
            "POST" | "PATCH" => {
                let builder = if method == "POST" {
                    self.agent.post(&url)
                } else {
                    self.agent.patch(&url)
                };
                let mut builder = builder
                    .config()
                    .timeout_global(Some(timeout))
                    .build()
                    .header("Content-Type", "application/json");
                if let Some(auth) = &self.authorization {
                    builder = builder.header("Authorization", auth);
                }
                builder.send(body.unwrap_or(""))
            }
            _ => {
                let builder = if method == "DELETE" {
                    self.agent.delete(&url)
                } else {
                    self.agent.get(&url)
                };
                let mut builder = builder.config().timeout_global(Some(timeout)).build();
                if let Some(auth) = &self.authorization {
                    builder = builder.header("Authorization", auth);
                }
                builder.call()
            }
        };
        let mut response = result.map_err(|e| self.transport_error(&request, e, timeout))?;
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .read_to_string()
            .map_err(|e| self.transport_error(&request, e, timeout))?;
        if status == 401 || status == 403 {
            return Err(FlinkError::Unauthorized {
                service: self.service,
                request,
                status,
            });
        }
        Ok(Answer {
            request,
            status,
            text,
        })
    }

    /// A request whose answer must be HTTP 200 with a JSON object.
    ///
    /// # Errors
    /// As [`Endpoint::send`], and `Unexpected` for any other answer.
    pub fn json(&self, method: &str, path: &str, body: Option<&str>) -> Result<(String, Json)> {
        let answer = self.send(method, path, body)?;
        if answer.status != 200 {
            return Err(self.unexpected(&answer));
        }
        let json = self.parse(&answer)?;
        Ok((answer.request, json))
    }

    /// The answer's body as a JSON object.
    ///
    /// # Errors
    /// `Unexpected` when it is not one.
    pub fn parse(&self, answer: &Answer) -> Result<Json> {
        match serde_json::from_str::<Json>(&answer.text) {
            Ok(v) if v.is_object() => Ok(v),
            _ => Err(self.unexpected(answer)),
        }
    }

    /// `Unexpected`, quoting the start of the answer with the secrets removed.
    pub fn unexpected(&self, answer: &Answer) -> FlinkError {
        FlinkError::Unexpected {
            service: self.service,
            request: answer.request.clone(),
            status: answer.status,
            body: self.redact(&quote(&answer.text)),
        }
    }

    /// Flink's refusal: the message lines of the `errors` its answer carries (a Java
    /// exception chain, or a plain message), or `Unexpected` when it carries none.
    pub fn refusal(&self, answer: &Answer) -> FlinkError {
        let errors: Option<Vec<String>> = serde_json::from_str::<Json>(&answer.text)
            .ok()
            .and_then(|v| v.get("errors").cloned())
            .and_then(|e| serde_json::from_value(e).ok());
        match errors.map(|e| crate::gateway::flink_reason(&e)) {
            Some(reason) if !reason.is_empty() => FlinkError::Rejected {
                reason: reason.iter().map(|l| self.redact(l)).collect(),
            },
            _ => self.unexpected(answer),
        }
    }

    /// `text` with every secret replaced by `***`.
    pub fn redact(&self, text: &str) -> String {
        let mut text = text.to_string();
        for secret in &self.secrets {
            text = text.replace(secret.as_str(), "***");
        }
        text
    }

    fn transport_error(&self, request: &str, e: ureq::Error, timeout: Duration) -> FlinkError {
        let reason = self.redact(&e.to_string());
        match e {
            ureq::Error::Timeout(_) => FlinkError::TimedOut {
                service: self.service,
                request: request.to_string(),
                seconds: timeout.as_secs(),
            },
            ureq::Error::Rustls(_) | ureq::Error::Tls(_) => FlinkError::Tls {
                service: self.service,
                address: self.address.clone(),
                reason,
            },
            ureq::Error::Io(ref io) if is_tls_failure(io) => FlinkError::Tls {
                service: self.service,
                address: self.address.clone(),
                reason,
            },
            ureq::Error::Io(_) | ureq::Error::ConnectionFailed | ureq::Error::HostNotFound => {
                FlinkError::Unreachable {
                    service: self.service,
                    address: self.address.clone(),
                    reason,
                }
            }
            // Anything else happened after the service answered: an answer too large, a
            // malformed response, a redirect this client does not follow.
            _ => FlinkError::Unexpected {
                service: self.service,
                request: request.to_string(),
                status: 0,
                body: reason,
            },
        }
    }
}

/// Whether an I/O error wraps a TLS failure (rustls reports a bad certificate as the
/// `InvalidData` error of the stream).
fn is_tls_failure(io: &std::io::Error) -> bool {
    let text = io.to_string().to_ascii_lowercase();
    // `received corrupt message`: a plain HTTP port answered the TLS handshake.
    text.contains("certificate")
        || text.contains("handshake")
        || text.contains("tls")
        || text.contains("corrupt message")
}

/// The start of a body for an error message.
pub fn quote(text: &str) -> String {
    let text = text.trim();
    if text.is_empty() {
        return "(an empty body)".into();
    }
    match text.char_indices().nth(QUOTED_CHARS) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_credential_never_shows_in_debug_or_errors() {
        let endpoint = Endpoint::new(
            Service::Gateway,
            "https://gateway:8083",
            &Connection {
                ca_pem: None,
                credential: Some(Credential::Basic("ops:s3cret-pass".into())),
            },
            Duration::from_secs(1),
        )
        .unwrap();
        assert_eq!(
            format!("{:?}", Credential::Bearer("tok-123".into())),
            "Bearer(***)"
        );
        let answer = Answer {
            request: "GET /x".into(),
            status: 500,
            text: "echo: Basic b3BzOnMzY3JldC1wYXNz and s3cret-pass".into(),
        };
        let message = endpoint.unexpected(&answer).to_string();
        assert!(!message.contains("s3cret-pass"), "{message}");
        assert!(!message.contains("b3BzOnMzY3JldC1wYXNz"), "{message}");
        assert!(message.contains("echo: *** and ***"), "{message}");
    }

    #[test]
    fn a_short_password_does_not_turn_messages_into_asterisks() {
        let endpoint = Endpoint::new(
            Service::Gateway,
            "http://gateway:8083",
            &Connection {
                ca_pem: None,
                credential: Some(Credential::Basic("u:p".into())),
            },
            Duration::from_secs(1),
        )
        .unwrap();
        assert_eq!(
            endpoint.redact("failed to lookup address information; Basic dTpw"),
            "failed to lookup address information; ***"
        );
    }

    #[test]
    fn refuses_an_address_that_is_not_http() {
        let err = Endpoint::new(
            Service::Gateway,
            "ftp://gateway:8083",
            &Connection::default(),
            Duration::from_secs(1),
        )
        .err()
        .expect("refused");
        assert!(
            err.to_string()
                .contains("must start with http:// or https://"),
            "{err}"
        );
    }

    #[test]
    fn a_ca_file_without_a_certificate_is_a_tls_error() {
        let err = Endpoint::new(
            Service::JobManager,
            "https://flink:8081",
            &Connection {
                ca_pem: Some(b"not a certificate".to_vec()),
                credential: None,
            },
            Duration::from_secs(1),
        )
        .err()
        .expect("refused");
        assert_eq!(
            err.to_string(),
            "the TLS handshake with the JobManager's REST API at https://flink:8081 failed: the CA file holds no PEM certificate"
        );
    }
}
