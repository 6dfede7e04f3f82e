use secrecy::{ExposeSecret, SecretString};

/// Credentials read from the environment; never logged.
pub struct Credentials {
    pub username: String,
    pub password: SecretString,
    pub api_key: Option<SecretString>,
    pub token: Option<String>,
}

pub struct Limits {
    pub max_tokens: u32,
    pub max_token_len: usize,
}

impl Credentials {
    pub fn from_env() -> Result<Self, std::env::VarError> {
        let password = SecretString::from(std::env::var("APP_PASSWORD")?);
        let token = std::env::var("APP_TOKEN").ok();
        Ok(Self { username: std::env::var("APP_USER")?, password, api_key: None, token })
    }

    pub fn header(&self) -> String {
        format!("Basic {}", self.password.expose_secret().len())
    }
}
