SELECT customer_id, NOT amount AS total_spend FROM source('orders')
