//! The little HTTP/1.1 both fake servers speak: read one request, write one JSON answer.

use std::io::{BufRead, Write};

/// One request.
pub struct Request {
    pub method: String,
    pub path: String,
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
    pub body: String,
}

/// Reads the next request, or `None` when the client closed the connection.
pub fn read_request(reader: &mut impl BufRead) -> Option<Request> {
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).ok()? == 0 {
        return None;
    }
    let mut length = 0usize;
    let mut authorization = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 {
            return None;
        }
        if header.trim().is_empty() {
            break;
        }
        let lower = header.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("authorization:") {
            authorization = Some(header["authorization:".len()..].trim().to_string());
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    let mut parts = request_line.split_whitespace();
    Some(Request {
        method: parts.next().unwrap_or("").to_string(),
        path: parts.next().unwrap_or("").to_string(),
        authorization,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// Writes one answer with a JSON content type.
pub fn write_response(out: &mut impl Write, status: u16, body: &str) {
    let _ = write!(
        out,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let _ = out.flush();
}
