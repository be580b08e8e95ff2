SELECT customer_id, SUM(amount) AS total_spend FROM source('orders') WHERE customer_id IS NOT NULL AND LOWER(NULL) = 'a' GROUP BY customer_id
