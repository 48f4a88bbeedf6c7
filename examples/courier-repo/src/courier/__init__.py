"""courier: a small multi-node message mesh over asyncio TCP streams."""
