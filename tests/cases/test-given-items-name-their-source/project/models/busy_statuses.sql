SELECT status, orders
FROM ref('status_counts')
WHERE orders >= 2
