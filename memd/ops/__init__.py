"""Operations on memory that both the socket and the CLI offer (remember, forget, list, switch)."""
