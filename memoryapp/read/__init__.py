"""The read path: whether a turn needs the user's memory (`need`) and which memories it gets
(`recall`)."""
