//! Connection URLs and error texts without their passwords.

/// `text` with every secret replaced by `***`.
pub(super) fn scrub(secrets: &[String], mut text: String) -> String {
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        text = text.replace(secret.as_str(), "***");
    }
    text
}

/// `url` with its password replaced by `***` (in the user info, or a
/// `password` parameter), and the passwords as they were written.
pub(super) fn redact(url: &str) -> (String, Vec<String>) {
    let mut secrets = Vec::new();
    let Some(scheme_end) = url.find("://") else {
        return (redact_key_values(url, &mut secrets), secrets);
    };
    let rest_start = scheme_end + 3;
    let authority_end = url[rest_start..]
        .find(['/', '?'])
        .map_or(url.len(), |i| rest_start + i);
    let authority = &url[rest_start..authority_end];
    let mut redacted = url[..rest_start].to_owned();
    match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            match userinfo.split_once(':') {
                Some((user, password)) => {
                    secrets.push(password.to_owned());
                    redacted.push_str(user);
                    redacted.push_str(":***");
                }
                None => redacted.push_str(userinfo),
            }
            redacted.push_str(&authority[at..]);
        }
        None => redacted.push_str(authority),
    }
    let rest = &url[authority_end..];
    match rest.split_once('?') {
        Some((path, params)) => {
            redacted.push_str(path);
            redacted.push('?');
            let params: Vec<String> = params
                .split('&')
                .map(|param| match param.split_once('=') {
                    Some(("password", value)) => {
                        secrets.push(value.to_owned());
                        "password=***".to_owned()
                    }
                    _ => param.to_owned(),
                })
                .collect();
            redacted.push_str(&params.join("&"));
        }
        None => redacted.push_str(rest),
    }
    (redacted, secrets)
}

/// A `key=value` connection string with its password's value replaced by
/// `***`.
pub(super) fn redact_key_values(text: &str, secrets: &mut Vec<String>) -> String {
    let Some(start) = text
        .match_indices("password")
        .map(|(i, _)| i)
        .find(|&i| i == 0 || text[..i].ends_with(char::is_whitespace))
    else {
        return text.to_owned();
    };
    let after_key = text[start + "password".len()..].trim_start();
    let Some(value) = after_key.strip_prefix('=') else {
        return text.to_owned();
    };
    let value = value.trim_start();
    let value_start = text.len() - value.len();
    let value_len = if let Some(quoted) = value.strip_prefix('\'') {
        let mut escaped = false;
        let close = quoted.char_indices().find(|&(_, c)| {
            let closes = c == '\'' && !escaped;
            escaped = c == '\\' && !escaped;
            closes
        });
        close.map_or(value.len(), |(i, _)| i + 2)
    } else {
        value.find(char::is_whitespace).unwrap_or(value.len())
    };
    let secret = &text[value_start..value_start + value_len];
    secrets.push(secret.trim_matches('\'').to_owned());
    format!(
        "{}***{}",
        &text[..value_start],
        &text[value_start + value_len..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::PostgresJournal;

    #[test]
    fn the_password_of_a_url_is_hidden() {
        let cases = [
            (
                "postgres://app:s3cret@db.internal:5432/agents",
                "postgres://app:***@db.internal:5432/agents",
            ),
            (
                "postgresql://app:p%40ss@db/agents?sslmode=disable&password=other",
                "postgresql://app:***@db/agents?sslmode=disable&password=***",
            ),
            ("postgres://app@db/agents", "postgres://app@db/agents"),
            ("postgres://db", "postgres://db"),
            (
                "host=db user=app password='a b' dbname=agents",
                "host=db user=app password=*** dbname=agents",
            ),
            ("host=db password=s3cret", "host=db password=***"),
        ];
        for (url, expected) in cases {
            assert_eq!(redact(url).0, expected, "{url}");
        }
    }

    #[tokio::test]
    async fn a_closed_port_fails_to_open_without_the_password() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        let port = listener.local_addr().expect("its address").port();
        drop(listener);
        let url = format!("postgres://app:hunter2-secret@127.0.0.1:{port}/agents");
        let error = PostgresJournal::connect(&url)
            .await
            .expect_err("nothing listens there");
        assert_eq!(error.kind(), "open", "{error}");
        let message = error.to_string();
        assert!(!message.contains("hunter2-secret"), "{message}");
        assert!(
            message.contains(&format!("postgres://app:***@127.0.0.1:{port}/agents")),
            "{message}"
        );
    }
}
