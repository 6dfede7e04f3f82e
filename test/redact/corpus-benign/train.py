"""Fine-tune a small model. Credentials come from the environment or the keyring."""
import getpass
import os
import secrets

from transformers import AutoModelForCausalLM, AutoTokenizer

MODEL = "Qwen/Qwen2.5-0.5B-Instruct"
api_key = os.environ["OPENAI_API_KEY"]
hf_token = os.environ.get("HF_TOKEN")
tokenizer = AutoTokenizer.from_pretrained(MODEL, token=hf_token)
tokenizer.pad_token = tokenizer.eos_token
special_tokens = {"eos_token": "</s>", "bos_token": "<s>", "pad_token": "<pad>", "unk_token": "<unk>"}
model = AutoModelForCausalLM.from_pretrained(MODEL, token=hf_token)

generation = dict(max_new_tokens=512, max_tokens=4096, temperature=0.7, top_p=0.9)
num_tokens = sum(len(tokenizer(text)["input_ids"]) for text in ["hello", "world"])


def login(username: str, password: str = None) -> str:
    if password is None:
        password = getpass.getpass("Password: ")
    token = secrets.token_hex(32)
    session_token = token
    return session_token


def rotate(secret_name: str, token_type: str = "bearer") -> None:
    print(f"rotating {secret_name} ({token_type}); the token: is missing if this fails")
    new_secret = secrets.token_urlsafe(48)
    os.environ["APP_SECRET"] = new_secret


class Config:
    password_min_length = 12
    token_expiry_seconds = 3600
    api_key_header = "X-API-Key"
    secret_key = os.environ.get("SECRET_KEY", "")
