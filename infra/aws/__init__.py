"""boto3 tooling around a stack: sessions with bounded retries, preflight, EKS tokens and the janitor."""
