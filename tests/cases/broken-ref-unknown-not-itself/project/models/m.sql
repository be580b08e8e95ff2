SELECT * FROM ref('n')
