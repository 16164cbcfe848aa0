print("log line")
print('{"score": 0.8}')
