SELECT customer_id, SUM(amount) AS total_spend FROM source('orders') WHERE amount GROUP BY customer_id
