variable "db_password" {
  type      = string
  sensitive = true
}

resource "aws_db_instance" "main" {
  identifier          = "orders"
  engine              = "postgres"
  instance_class      = "db.t4g.micro"
  username            = "orders"
  password            = var.db_password
  skip_final_snapshot = true
}

resource "aws_secretsmanager_secret" "api_token" {
  name = "orders/api-token"
}

output "secret_arn" {
  value = aws_secretsmanager_secret.api_token.arn
}
