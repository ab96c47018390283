"""The Predict story: a family model predicting the next character, its loss along a text past
its training length, and generation."""
