package main

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"os"
)

type Credentials struct {
	Username string `json:"username"`
	Password string `json:"password"`
	APIKey   string `json:"api_key,omitempty"`
}

type Config struct {
	MaxTokens   int    `yaml:"max_tokens"`
	TokenHeader string `yaml:"token_header"`
	SecretName  string `yaml:"secret_name"`
}

func authenticate(w http.ResponseWriter, r *http.Request) {
	token := os.Getenv("API_TOKEN")
	secret := []byte(os.Getenv("WEBHOOK_SECRET"))
	var creds Credentials
	if err := json.NewDecoder(r.Body).Decode(&creds); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	password := creds.Password
	if subtle.ConstantTimeCompare([]byte(password), secret) != 1 || token == "" {
		http.Error(w, "the token: is missing", http.StatusUnauthorized)
		return
	}
	w.Header().Set("X-Token-Expires-In", "3600")
}
