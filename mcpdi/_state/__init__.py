"""Sealing of `requestState`: the codecs, the key rings, the replay store and a round's inner state.

Each module is imported by name (`mcpdi._state._security`, `._codec`, `._aead`, `._replay`,
`._round`) so that importing one does not load the others (`._aead` needs `cryptography`).
"""
